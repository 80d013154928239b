"""Sizes and indices from the caller near the int64 limits, on the whole call path (binding,
origins and domains, array spans, plans, run-time interval bounds, variable K offsets, data
indices): each hostile call is a ValueError or TypeError naming the argument (an IndexError
for a run-time data index, as docs/language.md says), raised before any point is computed,
with every array and the buffers behind views unchanged. Arrays made with
np.lib.stride_tricks.as_strided whose strides reach past their memory are refused, never
read; negative strides and views are computed correctly."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import gtscript
from gtscript import FORWARD, PARALLEL, Field, I, J, K, computation, interval
from cuda_emulation.runner import emulate, require_compiler

BACKENDS = ("cpu", "numpy", "cuda")
BIG = 2**63
LIMITS = (BIG - 1, BIG - 2, 2**62, 2**62 + 1, -BIG, -(2**62))


def copy(src: Field[np.float64], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = src


def shifted(src: Field[np.float64], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = src[1, -1, 0] + src[-1, 1, 0]


def levels(src: Field[np.float64], dst: Field[np.float64], n: int):
    with computation(FORWARD), interval(0, n + 1):
        dst = src


def koffset(src: Field[np.float64], dst: Field[np.float64], kk: int):
    with computation(PARALLEL), interval(...):
        dst = src[0, 0, kk]


def component(src: Field[(np.float64, (3,))], dst: Field[np.float64], c: int):
    with computation(PARALLEL), interval(...):
        dst = src[0, 0, 0][c]


def last_component(src: Field[(np.float64, (3,))], dst: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        dst = src[0, 0, 0][2]


def outer(a: Field[I, np.float64], b: Field[J, np.float64], c: Field[K, np.float64],
          out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a + b + c


_built = {}


def build(backend, defn):
    key = (backend, defn.__name__)
    if key not in _built:
        if backend == "cuda":
            require_compiler()
            _built[key] = emulate(gtscript.stencil("cuda", defn), (3, 2))
        else:
            _built[key] = gtscript.stencil(backend, defn)
    return _built[key]


def refused(fields, st, arrays, exc, match, **call):
    """The call raises `exc` matching `match` and changes no array (nor what they view)."""
    snap = fields.snapshot(*arrays)
    with pytest.raises(exc, match=match):
        st(*arrays, **call)
    fields.assert_unchanged(snap)


def arrays(fields, shape=(4, 5, 6)):
    return fields.random(shape), fields.sentinel(shape)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("value", LIMITS)
def test_origin_and_domain_near_the_int64_limits(fields, backend, axis, value):
    st = build(backend, copy)
    src, dst = arrays(fields)
    o = [0, 0, 0]
    o[axis] = value
    refused(fields, st, (src, dst), ValueError, r"'src'|origin|domain", origin=tuple(o), domain=(1, 1, 1))
    refused(fields, st, (src, dst), ValueError, r"'src'|origin|domain", origin={"dst": tuple(o)},
            domain=(1, 1, 1))
    d = [1, 1, 1]
    d[axis] = value
    refused(fields, st, (src, dst), ValueError, r"'src'|domain", origin=(1, 1, 1), domain=tuple(d))


@pytest.mark.parametrize("backend", BACKENDS)
def test_origins_past_64_bits_are_value_errors(fields, backend):
    st = build(backend, copy)
    src, dst = arrays(fields)
    for o in ((2**64, 0, 0), (0, -(2**63) - 1, 0), (0, 0, 2**100)):
        refused(fields, st, (src, dst), ValueError, "origin", origin=o, domain=(1, 1, 1))
    refused(fields, st, (src, dst), ValueError, "domain", domain=(1, 2**64, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_origin_near_the_limit_on_a_view_writes_nothing(fields, backend):
    # the case: once a silent write one plane before the view
    st = build(backend, shifted)
    buf = np.full((10, 6, 4), fields.SENTINEL)
    view = buf[5:]
    src = fields.random(view.shape)
    refused(fields, st, (src, view), ValueError, r"'src'|'dst'", origin=(BIG - 1, 0, 0), domain=(1, 1, 1))
    refused(fields, st, (src, view), ValueError, r"'src'|'dst'|domain", origin=(1, 1, 0), domain=(BIG - 1, 2, 1))
    assert (buf == fields.SENTINEL).all()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stride", [2**62, 2**61, 2**40, 8 * 1000, -(2**62), -(2**40), -8 * 100])
@pytest.mark.parametrize("which", ["src", "dst"])
def test_strides_past_the_memory_they_view_are_refused(fields, backend, stride, which):
    st = build(backend, copy)
    buf = np.full(64, fields.SENTINEL)
    # a (3, 2, 2) view over 64 doubles whose first axis reaches far past them (or before them)
    bad = as_strided(buf[8:], shape=(3, 2, 2), strides=(stride, 16, 8))
    good = fields.random((3, 2, 2)) if which == "dst" else fields.sentinel((3, 2, 2))
    args = (bad, good) if which == "src" else (good, bad)
    snap = fields.snapshot(buf, good)
    with pytest.raises(ValueError, match=f"'{which}'.*(outside the memory|address space)"):
        st(*args)
    fields.assert_unchanged(snap)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_strides_inside_the_memory_they_view_are_computed(fields, backend):
    st = build(backend, copy)
    buf = np.arange(64.0)
    src = as_strided(buf, shape=(3, 2, 2), strides=(8 * 20, 16, 8))  # the last element is 52
    out_buf = np.full(128, fields.SENTINEL)
    dst = as_strided(out_buf[100:], shape=(3, 2, 2), strides=(-8 * 40, -16, 8))  # down to 20
    st(src, dst)
    np.testing.assert_array_equal(dst, np.asarray(src))
    written = np.zeros(128, bool)
    for i in range(3):
        for j in range(2):
            for k in range(2):
                written[100 - 40 * i - 2 * j + k] = True
    assert (out_buf[~written] == fields.SENTINEL).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_strides_everywhere(fields, backend):
    st = build(backend, shifted)
    values = fields.random((7, 6, 5))
    src = values[::-1, ::-1, ::-1].copy()[::-1, ::-1, ::-1]  # a reversed view of a copy
    assert all(s < 0 for s in src.strides)
    np.testing.assert_array_equal(src, values)
    buf = np.full((9, 8, 7), fields.SENTINEL)
    dst = buf[-2:0:-1, -2:0:-1, -2:0:-1]
    assert dst.shape == (7, 6, 5) and all(s < 0 for s in dst.strides)
    st(src, dst, origin=(1, 1, 0), domain=(5, 4, 5))
    expect = np.full((7, 6, 5), fields.SENTINEL)
    expect[1:6, 1:5] = values[2:7, 0:4] + values[0:5, 2:6]
    np.testing.assert_allclose(dst, expect, rtol=1e-12)
    inner = np.zeros(buf.shape, bool)
    inner[1:-1, 1:-1, 1:-1] = True
    assert (buf[~inner] == fields.SENTINEL).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_size_dimensions(fields, backend):
    st = build(backend, copy)
    for shape in ((0, 5, 6), (4, 0, 6), (4, 5, 0)):
        src, dst = np.zeros(shape), np.zeros(shape)
        refused(fields, st, (src, dst), ValueError, r"'src'|'dst'")
        refused(fields, st, (src, dst), ValueError, r"'src'|'dst'", domain=(1, 1, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dimensions_with_huge_counts(fields, backend):
    st = build(backend, last_component)
    buf = np.zeros(16)
    huge = as_strided(buf, shape=(2, 2, 2, 2**40), strides=(8, 8, 8, 0))
    out = fields.sentinel((2, 2, 2))
    with pytest.raises(ValueError, match=r"'src'.*data dimension 0 has size 1099511627776"):
        st(huge, out)
    reach = as_strided(buf, shape=(2, 2, 2, 3), strides=(8, 8, 8, 2**60))
    with pytest.raises(ValueError, match=r"'src'.*outside the memory"):
        st(reach, out)
    assert (out == fields.SENTINEL).all()
    # a reversed data dimension is fine
    src = fields.random((2, 2, 2, 3))
    st(src[..., ::-1], out)
    np.testing.assert_array_equal(out, src[..., 0])


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("validate", [True, False])
def test_a_domain_of_more_than_2_63_points_is_refused(fields, backend, validate):
    # one-axis fields of 2**59 points each (a zero stride over 8 bytes) make a domain of
    # 2**177 points: tile counts and buffer sizes computed from it would overflow
    st = build(backend, outer)
    one = as_strided(np.zeros(1), shape=(2**59,), strides=(0,))
    out = as_strided(np.full(1, fields.SENTINEL), shape=(2**59, 1, 1), strides=(0, 0, 0))
    with pytest.raises(ValueError, match=r"domain .* has more than 2\*\*63 - 1 points"):
        st(one, one, one, out, domain=(2**59, 2**59, 2**59), validate_args=validate)
    assert out[0, 0, 0] == fields.SENTINEL


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [BIG - 1, BIG - 2, 2**62, 2**31, -BIG, -(2**62), -(2**31) - 1])
def test_run_time_interval_bounds_near_the_int64_limits(fields, backend, n):
    st = build(backend, levels)
    src, dst = arrays(fields)
    refused(fields, st, (src, dst), ValueError, r"interval on line \d+", n=n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalars_past_64_bits(fields, backend):
    st = build(backend, levels)
    src, dst = arrays(fields)
    for n in (2**63, -(2**63) - 1, 2**100):
        refused(fields, st, (src, dst), ValueError, f"'n' \\({n}\\) does not fit in int64", n=n)


def add32(a: Field[np.float64], b: Field[np.float64], s: np.int32):
    with computation(PARALLEL), interval(...):
        b = a + s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("s", [2**31, -(2**31) - 1, 2**63, 2**64])
def test_out_of_range_int32_scalars_are_value_errors(fields, backend, s):
    # docs/calling.md: call errors are TypeError or ValueError (this was an OverflowError)
    st = build(backend, add32)
    a, b = arrays(fields)
    refused(fields, st, (a, b), ValueError, rf"argument 's' \({s}\) does not fit in int(32|64)", s=s)
    st(a, b, s=2**31 - 1)
    np.testing.assert_array_equal(b, a + (2**31 - 1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kk", [BIG - 1, BIG - 3, 2**62, -BIG, -BIG + 2, -(2**62)])
def test_variable_k_offsets_near_the_int64_limits(fields, backend, kk):
    st = build(backend, koffset)
    src, dst = arrays(fields)
    refused(fields, st, (src, dst), ValueError, r"'src'.*K index", kk=kk)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("c", [BIG - 1, 2**62, 2**31, 3, -1, -BIG])
def test_run_time_data_indices_near_the_int64_limits(fields, backend, c):
    st = build(backend, component)
    src = fields.random((4, 5, 6, 3))
    dst = fields.sentinel((4, 5, 6))
    refused(fields, st, (src, dst), IndexError, r"data index on line \d+ .* computed from 'c'", c=c)


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_exec_info_call_count_saturates(fields, backend):
    # the running count is the caller's dict entry: a huge one must not overflow
    st = build(backend, copy)
    src, dst = arrays(fields)
    info = {"__aggregate_data": True}
    st(src, dst, exec_info=info)
    (key,) = [k for k, v in info.items() if isinstance(v, dict) and "ncalls" in v]
    assert info[key]["ncalls"] == 1
    info[key]["ncalls"] = BIG - 2
    st(src, dst, exec_info=info)
    assert info[key]["ncalls"] == BIG - 1
    st(src, dst, exec_info=info)
    assert info[key]["ncalls"] == BIG - 1
    np.testing.assert_array_equal(dst, src)
