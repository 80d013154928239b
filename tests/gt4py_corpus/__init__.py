"""A corpus of GT4Py-style stencil definitions, each written once in GT4Py's spelling, for
the differential test against GT4Py (tests/compat_gt4py/test_conformance_gt4py.py)."""
