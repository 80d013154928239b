"""Writes through a constant data-dimension index are range-checked at build time, as reads
are: an index past a data dimension (or before it) would store into the next point's
components or past the array. Each case raises a GTScriptSyntaxError-family error at the
line, on every backend, before any code is generated; the in-range boundary index writes
exactly the last component and nothing around the field."""

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSyntaxError
from cuda_emulation.runner import emulate, require_compiler

V3 = (np.float64, (3,))
M23 = (np.float64, (2, 3))


def vec_past_end(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        b[0, 0, 0][3] = a


def vec_far_past_end(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        b[0, 0, 0][1000] = a


def vec_negative(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        b[0, 0, 0][-1] = a


def vec_accessor_past_end(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        b.A[3] = a


def mat_row_past_end(a: Field[np.float64], m: Field[M23]):
    with computation(PARALLEL), interval(...):
        m[0, 0, 0][2, 0] = a


def mat_col_past_end(a: Field[np.float64], m: Field[M23]):
    with computation(PARALLEL), interval(...):
        m[0, 0, 0][1, 3] = a


def mat_accessor_col_past_end(a: Field[np.float64], m: Field[M23]):
    with computation(PARALLEL), interval(...):
        m.A[0, 3] = a


def mat_negative(a: Field[np.float64], m: Field[M23]):
    with computation(PARALLEL), interval(...):
        m[0, 0, 0][0, -2] = a


def nested_write_past_end(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        if a > 0.0:
            b[0, 0, 0][0] = a
        else:
            b[0, 0, 0][4] = a


CASES = [
    (vec_past_end, "b[0, 0, 0][3] = a", r"data index 3 of 'b' is out of range: dimension 0 has size 3"),
    (vec_far_past_end, "b[0, 0, 0][1000] = a", r"data index 1000 of 'b' is out of range"),
    (vec_negative, "b[0, 0, 0][-1] = a", r"data ind(ex|ices).*(>= 0|out of range)"),
    (vec_accessor_past_end, "b.A[3] = a", r"data index 3 of 'b' is out of range"),
    (mat_row_past_end, "m[0, 0, 0][2, 0] = a", r"data index 2 of 'm' is out of range: dimension 0 has size 2"),
    (mat_col_past_end, "m[0, 0, 0][1, 3] = a", r"data index 3 of 'm' is out of range: dimension 1 has size 3"),
    (mat_accessor_col_past_end, "m.A[0, 3] = a", r"data index 3 of 'm' is out of range: dimension 1 has size 3"),
    (mat_negative, "m[0, 0, 0][0, -2] = a", r"data ind(ex|ices).*(>= 0|out of range)"),
    (nested_write_past_end, "b[0, 0, 0][4] = a", r"data index 4 of 'b' is out of range"),
]


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
@pytest.mark.parametrize("defn, line, match", CASES, ids=[c[0].__name__ for c in CASES])
def test_out_of_range_constant_data_index_write_is_a_build_error(backend, defn, line, match):
    with pytest.raises(GTScriptSyntaxError, match=match) as info:
        gtscript.stencil(backend, defn)
    err = info.value
    # located at the offending statement of this file
    assert err.filename == __file__
    assert err.text is not None and err.text.strip() == line


def vec_last(a: Field[np.float64], b: Field[V3]):
    with computation(PARALLEL), interval(...):
        b[0, 0, 0][2] = a


def mat_last(a: Field[np.float64], m: Field[M23]):
    with computation(PARALLEL), interval(...):
        m.A[1, 2] = 2.0 * a


def _padded(shape, ddims, sentinel):
    """A view of shape ``shape + ddims`` inside a sentinel-filled buffer with margins on every
    axis, the data dimensions included (a write past the last component lands in them)."""
    big = np.full(tuple(n + 3 for n in shape) + tuple(d + 2 for d in ddims), sentinel)
    return big[(slice(1, -2),) * 3 + tuple(slice(1, 1 + d) for d in ddims)]


def _run(backend, defn, a, out):
    if backend == "cuda":
        require_compiler()
        st = emulate(gtscript.stencil("cuda", defn), (3, 2))
    else:
        st = gtscript.stencil(backend, defn)
    st(a, out)


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
@pytest.mark.parametrize("defn, ddims, index, scale", [
    (vec_last, (3,), (2,), 1.0),
    (mat_last, (2, 3), (1, 2), 2.0),
], ids=["vector", "matrix"])
def test_last_component_write_stays_inside_the_field(fields, backend, defn, ddims, index, scale):
    shape = (5, 4, 3)
    a = fields.random(shape)
    out = _padded(shape, ddims, fields.SENTINEL)
    _run(backend, defn, a, out)
    expected = np.full(shape + ddims, fields.SENTINEL)
    expected[(Ellipsis,) + index] = scale * a
    np.testing.assert_array_equal(out, expected)
    fields.assert_view_padding_untouched(out, what="out")
