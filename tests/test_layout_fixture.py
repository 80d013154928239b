"""The `fields` fixture's layouts (tests/conftest.py): every test that compares backends in a
memory layout relies on `as_layout` giving each call its own copy of the reference data."""

import numpy as np
import pytest

import gtscript
from conftest import LAYOUTS


@pytest.mark.parametrize("src", LAYOUTS)
@pytest.mark.parametrize("dst", LAYOUTS)
def test_as_layout_returns_a_new_array(fields, src, dst):
    # kij -> kij used to return the very buffer it was given (np.ascontiguousarray of a view
    # that is already C-contiguous), so a stencil writing the "copy" changed the original.
    x = fields.random((4, 5, 3), layout=src)
    before = np.array(x, copy=True)
    y = fields.as_layout(x, dst)
    assert not np.shares_memory(x, y)
    y[...] = -7.0
    np.testing.assert_array_equal(x, before)


def _inout(a: gtscript.Field[float], b: gtscript.Field[float]):
    with gtscript.computation(gtscript.PARALLEL), gtscript.interval(...):
        b = a[1, 0, 0] + b * 2.0


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_reference_data_survives_calls_on_its_copies(fields, backend, layout):
    """Each backend gets copies made with `as_layout` from one reference array in `layout`
    and writes one of them in place: the reference array must survive for the next."""
    st = gtscript.stencil(backend, _inout)
    shape = (6, 5, 3)
    a0, b0 = fields.random(shape, layout=layout), fields.random(shape, layout=layout)
    want = np.array(b0, copy=True)
    want[:-1] = np.asarray(a0)[1:] + 2.0 * np.asarray(b0)[:-1]
    for _ in range(2):
        a, b = fields.as_layout(a0, layout), fields.as_layout(b0, layout)
        st(a, b, origin=(0, 0, 0), domain=(shape[0] - 1, shape[1], shape[2]))
        np.testing.assert_allclose(b, want, rtol=1e-12)
