"""Definitions, functions, field aliases and enums written as a GT4Py-based framework writes
them (NDSL, PyFV3): their modules import ``gt4py.cartesian.gtscript``, never gtscript, and
tests/compat_gt4py/test_gt4py_objects.py builds them with ``gtscript.stencil`` and with GT4Py's numpy
backend."""
