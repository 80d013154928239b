"""Definitions in a module with ``from __future__ import annotations``: the annotations are
strings there, and ``GlobalTable[(dtype, (n, ...))]`` is evaluated like ``Field[...]``.
cpu and numpy against hand-written NumPy, with sentinel-filled margins."""

import numpy as np
import pytest
from future_annotations_stencils import lookup, polynomial

import gtscript

SENTINEL = -7777.0


def test_the_definitions_module_defers_its_annotations():
    assert all(isinstance(a, str) for a in polynomial.__annotations__.values())
    assert polynomial.__annotations__["coef"].startswith("GlobalTable[")


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_a_global_table_annotation_as_a_string(rng, backend):
    st = gtscript.stencil(backend, polynomial)
    coef = np.array([0.5, -2.0, 3.0])
    x = rng.uniform(-1, 1, (6, 5, 3))
    out = np.full(x.shape, SENTINEL)
    st(coef, x, out, origin=(1, 1, 0), domain=(4, 3, 3))
    expected = np.full(x.shape, SENTINEL)
    c = x[1:5, 1:4]
    expected[1:5, 1:4] = 0.5 - 2.0 * c + 3.0 * c * c
    np.testing.assert_array_equal(out, expected)
    # the table's shape is part of the annotation: another shape is refused, nothing written
    out = np.full(x.shape, SENTINEL)
    with pytest.raises(ValueError, match="coef"):
        st(np.ones(4), x, out, origin=(1, 1, 0), domain=(4, 3, 3))
    assert (out == SENTINEL).all()


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_a_2d_table_with_fields_of_other_axes(rng, backend):
    st = gtscript.stencil(backend, lookup)
    tab = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 6))
    x = rng.uniform(-1, 1, (6, 6, 2))
    out = np.full(x.shape, SENTINEL)
    st(tab, w, x, out, origin=(1, 1, 0), domain=(4, 4, 2))
    expected = np.full(x.shape, SENTINEL)
    t13, t02 = np.float64(tab[1, 3]), np.float64(tab[0, 2])
    expected[1:5, 1:5] = t13 * x[2:6, 1:5] - t02 * w[1:5, 1:5, None] + x[1:5, 0:4]
    np.testing.assert_array_equal(out, expected)
