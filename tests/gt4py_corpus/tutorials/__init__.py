"""GT4Py's quickstart, language-reference examples and tutorial notebooks, retold as programs
in GT4Py's spelling (each a ``run(backend)`` returning its results), for
tests/compat_gt4py/test_gt4py_tutorials.py."""
