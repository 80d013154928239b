"""Integers the frontend hands to the core are range-checked: offsets, write offsets, interval
and region bounds beyond 2**20 either way are a GTScriptSyntaxError-family error at the line,
never silently truncated to 32 bits (`a[2**32, 0, 0]` once built as `a[0, 0, 0]`, with a halo
that agreed) nor a bare OverflowError; data dimensions are limited to 2**31 - 1 components."""

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, I, computation, horizontal, interval, region
from gtscript.errors import GTScriptDefinitionError, GTScriptSyntaxError


def off_2_32(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[2**32, 0, 0]


def off_2_32_minus_1(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[0, 2**32 - 1, 0]


def off_2_63(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[0, 0, 2**63]


def off_minus_2_64(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[-(2**64), 0, 0]


def off_just_past(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[2**20 + 1, 0, 0]


def write_off_2_32(a: Field[np.float64], b: Field[np.float64]):
    with computation(FORWARD), interval(...):
        b[0, 0, 2**32] = a


def interval_2_32(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(0, 2**32):
        b = a


def interval_minus_2_63(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(-(2**63), None):
        b = a


def region_2_32(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a
        with horizontal(region[I[0] + 2**32, :]):
            b = 2.0 * a


CASES = [
    (off_2_32, "b = a[2**32, 0, 0]", "offset 4294967296 is out of range"),
    (off_2_32_minus_1, "b = a[0, 2**32 - 1, 0]", "offset 4294967295 is out of range"),
    (off_2_63, "b = a[0, 0, 2**63]", "offset 9223372036854775808 is out of range"),
    (off_minus_2_64, "b = a[-(2**64), 0, 0]", "offset -18446744073709551616 is out of range"),
    (off_just_past, "b = a[2**20 + 1, 0, 0]", "offset 1048577 is out of range"),
    (write_off_2_32, "b[0, 0, 2**32] = a", "offset 4294967296 is out of range"),
    (interval_2_32, "with computation(PARALLEL), interval(0, 2**32):", "bound 4294967296 is out of range"),
    (interval_minus_2_63, "with computation(PARALLEL), interval(-(2**63), None):",
     "bound -9223372036854775808 is out of range"),
    (region_2_32, "with horizontal(region[I[0] + 2**32, :]):", "bound 4294967296 is out of range"),
]


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
@pytest.mark.parametrize("defn, line, match", CASES, ids=[c[0].__name__ for c in CASES])
def test_out_of_range_integers_are_errors_at_the_line(backend, defn, line, match):
    with pytest.raises(GTScriptSyntaxError, match=match) as info:
        gtscript.stencil(backend, defn)
    assert info.value.filename == __file__
    assert info.value.text is not None and info.value.text.strip() == line


def off_at_limit(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[0, 0, 2**20] + a[0, 0, -(2**20)]


def test_offsets_at_the_limit_build_with_the_halo_they_read():
    st = gtscript.stencil("numpy", off_at_limit)
    assert st.field_info["a"]["extent"][2] == (-(2**20), 2**20)


@pytest.mark.parametrize("dims", [(2**31,), (2**16, 2**15), (2**32 + 3,)])
def test_data_dimensions_beyond_2_31_components_are_refused(dims):
    with pytest.raises(GTScriptDefinitionError, match="at most 2147483647 components"):
        Field[(np.float64, dims)]


def test_data_dimensions_up_to_the_limit_are_accepted():
    assert Field[(np.float64, (2**31 - 1,))].data_dims == (2**31 - 1,)
