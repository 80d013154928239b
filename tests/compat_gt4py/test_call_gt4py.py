"""The call path as a GT4Py user meets it: no call silently computes less than asked (empty or
ambiguous compute domains are errors, masked arrays are refused), exec_info carries GT4Py's
keys, scalar defaults and unused parameters work, and every array NumPy views without a copy
is accepted. Each behaviour runs on cpu, numpy and (where the call path is shared) the cuda
backend's host emulation, against hand-written NumPy, with sentinel-filled outputs proving
that nothing outside the compute domain is written and that a refused call changes nothing.
"""

import inspect
import os
import tempfile
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript import storage
from cuda_emulation.runner import emulate, require_compiler

ALL_BACKENDS = ("cpu", "numpy", "cuda")


def build(backend, definition, **kwargs):
    """A stencil on ``backend``; cuda runs on the host emulation (no GPU needed)."""
    if backend == "cuda":
        require_compiler()
        return emulate(gtscript.stencil("cuda", definition, **kwargs))
    return gtscript.stencil(backend, definition, **kwargs)


@pytest.fixture(params=ALL_BACKENDS)
def any_backend(request):
    return request.param


def fails(fields, exc, pattern, call, *arrays):
    """``call()`` raises ``exc`` matching ``pattern`` and leaves every array bit-identical."""
    snap = fields.snapshot(*arrays)
    with pytest.raises(exc, match=pattern) as info:
        call()
    fields.assert_unchanged(snap)
    return info.value


# ------------------------------------------------------------------------------ definitions

def shift2_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[2, 0, 0]


def lap_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp


def copy_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


def plane_defn(inp: Field[np.float64], bias: Field[IJ, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + bias


def scale_defn(inp: Field[np.float64], out: Field[np.float64], *, weight: np.float64 = 2.0,
               shift: np.int64 = 3):
    with computation(PARALLEL), interval(...):
        out = weight * inp + shift


def optional_defn(inp: Field[np.float64], extra: Field[np.float64], out: Field[np.float64],
                  factor: np.float64):
    from __externals__ import USE_EXTRA

    with computation(PARALLEL), interval(...):
        if __INLINED(USE_EXTRA):
            out = inp + factor * extra
        else:
            out = inp


def ij_only_defn(inp: Field[IJ, np.float64], out: Field[IJ, np.float64]):
    with computation(FORWARD), interval(...):
        out = 2.0 * inp + 1.0


def vec_defn(inp: Field[(np.float64, (2,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[0, 0, 0][0] - inp[0, 0, 0][1]


# ================================================================ 1. silent no-ops are errors

@pytest.mark.parametrize("defn, shape, need, axis", [
    (shift2_defn, (2, 10, 5), 3, "I"),   # reads inp[2, 0, 0]: needs 3 points for one
    (lap_defn, (4, 2, 5), 3, "J"),       # halo of one each side
])
def test_array_too_small_for_the_halo_is_an_error(fields, any_backend, defn, shape, need, axis):
    st = build(any_backend, defn)
    inp, out = fields.random(shape), fields.sentinel(shape)
    err = fails(fields, ValueError, r"'inp'", lambda: st(inp, out), inp, out)
    text = str(err)
    assert str(shape) in text and f"along {axis}" in text and f"needs {need} points" in text


def test_too_few_k_levels_for_the_intervals_stays_an_error(fields, backend):
    def split_defn(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL):
            with interval(0, 1):
                out = inp
            with interval(1, -1):
                out = 2.0 * inp
            with interval(-1, None):
                out = 3.0 * inp

    st = gtscript.stencil(backend, split_defn)
    inp, out = fields.random((4, 4, 2)), fields.sentinel((4, 4, 2))
    fails(fields, ValueError, "K levels", lambda: st(inp, out), inp, out)


@pytest.mark.parametrize("domain", [(0, 4, 4), (4, 0, 4), (4, 4, 0), (-1, 4, 4), (4, 4, -3)])
def test_explicit_empty_domain_is_an_error_naming_domain(fields, any_backend, domain):
    st = build(any_backend, copy_defn)
    inp, out = fields.random((6, 6, 6)), fields.sentinel((6, 6, 6))
    fails(fields, ValueError, r"^domain \(", lambda: st(inp, out, domain=domain), inp, out)


def test_default_domain_of_disagreeing_arrays_is_an_error(fields, any_backend):
    st = build(any_backend, copy_defn)
    inp, out = fields.random((10, 10, 5)), fields.sentinel((8, 10, 5))
    err = fails(fields, ValueError, "domain=", lambda: st(inp, out), inp, out)
    assert "'inp' of shape (10, 10, 5)" in str(err) and "'out' of shape (8, 10, 5)" in str(err)
    # with an explicit domain the same arrays are fine: exactly the box asked for is written
    before = out.copy()
    st(inp, out, domain=(8, 10, 5))
    fields.assert_written_only_in(out, before, (0, 0, 0), (8, 10, 5), inp[:8])
    before = out.copy()
    st(inp, out, domain=(3, 2, 1), origin=(1, 2, 3))
    fields.assert_written_only_in(out, before, (1, 2, 3), (3, 2, 1), inp[1:4, 2:4, 3:4])


def test_domain_checks_hold_without_validation(fields, any_backend):
    """validate_args=False skips the costly checks, not these: they decide what is computed."""
    st = build(any_backend, copy_defn)
    inp, out = fields.random((10, 4, 3)), fields.sentinel((8, 4, 3))
    fails(fields, ValueError, "disagree", lambda: st(inp, out, validate_args=False), inp, out)
    fails(fields, ValueError, r"^domain",
          lambda: st(inp, out, domain=(0, 1, 1), validate_args=False), inp, out)
    lap = build(any_backend, lap_defn)
    tiny, tiny_out = fields.random((2, 4, 3)), fields.sentinel((2, 4, 3))
    fails(fields, ValueError, "too small", lambda: lap(tiny, tiny_out, validate_args=False),
          tiny, tiny_out)


def test_disagreeing_k_sizes_are_an_error_too(fields, backend):
    st = gtscript.stencil(backend, copy_defn)
    inp, out = fields.random((6, 6, 7)), fields.sentinel((6, 6, 5))
    err = fails(fields, ValueError, "along K", lambda: st(inp, out), inp, out)
    assert "(6, 6, 7)" in str(err) and "(6, 6, 5)" in str(err)


def test_arrays_that_differ_only_by_the_halo_agree(fields, any_backend):
    """Same-shaped arrays with a halo, and an input sized exactly for its reads, give one
    domain without domain=."""
    lap = build(any_backend, lap_defn)
    inp, out = fields.random((9, 8, 3)), fields.sentinel((9, 8, 3))
    before = out.copy()
    lap(inp, out)
    c = inp[1:-1, 1:-1]
    expect = inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2] - 4.0 * c
    fields.assert_written_only_in(out, before, (1, 1, 0), (7, 6, 3), expect)

    shift = build(any_backend, shift2_defn)
    inp, out = fields.random((9, 4, 3)), fields.sentinel((7, 4, 3))  # inp: two more along I
    before = out.copy()
    shift(inp, out)
    fields.assert_written_only_in(out, before, (0, 0, 0), (7, 4, 3), inp[2:])


def test_ij_fields_share_only_their_axes_with_3d_fields(fields, any_backend):
    st = build(any_backend, plane_defn)
    inp, bias, out = fields.random((5, 4, 6)), fields.random((5, 4)), fields.sentinel((5, 4, 6))
    st(inp, bias, out)
    fields.assert_close(out, inp + bias[:, :, None])
    small = fields.random((5, 3))
    err = fails(fields, ValueError, "along J", lambda: st(inp, small, out), inp, small, out)
    assert "'bias' of shape (5, 3) from origin (0, 0)" in str(err)


def test_masked_arrays_are_refused(fields, any_backend):
    st = build(any_backend, copy_defn)
    data, out = fields.random((4, 4, 4)), fields.sentinel((4, 4, 4))
    masked = np.ma.masked_array(data, mask=data > 0)
    fails(fields, TypeError, r"'inp' is a masked array.*filled", lambda: st(masked, out), data, out)
    out_masked = np.ma.masked_array(out.copy(), mask=False)
    fails(fields, TypeError, r"'out' is a masked array", lambda: st(data, out_masked), data, out)


# ------------------------------------------------------------------------------ exec_info

GT4PY_KEYS = {"call_start_time", "call_run_start_time", "run_start_time", "run_end_time",
              "call_run_end_time", "call_end_time", "domain", "origin", "__aggregate_data"}


def test_exec_info_reports_domain_origin_and_gt4py_times(fields, any_backend):
    st = build(any_backend, plane_defn)
    inp, bias, out = fields.random((6, 5, 4)), fields.random((7, 5)), fields.sentinel((6, 5, 4))
    info = {}
    st(inp, bias, out, origin={"_all_": (1, 0, 1), "bias": (2, 1)}, domain=(3, 4, 2),
       exec_info=info)
    assert GT4PY_KEYS <= set(info)
    assert {"run_time", "backend", "module_source", "build_time"} <= set(info)  # gtscript's own
    assert info["domain"] == (3, 4, 2)
    assert info["origin"] == {"inp": (1, 0, 1), "bias": (2, 1), "out": (1, 0, 1)}
    assert info["__aggregate_data"] is False
    assert (info["call_start_time"] <= info["call_run_start_time"] <= info["run_start_time"]
            <= info["run_end_time"] <= info["call_run_end_time"] <= info["call_end_time"])
    assert info["backend"] == any_backend
    np.testing.assert_allclose(out[1:4, 0:4, 1:3], inp[1:4, 0:4, 1:3] + bias[2:5, 1:5, None])


def test_exec_info_origin_has_zeros_for_data_dimensions(fields, backend):
    st = gtscript.stencil(backend, vec_defn)
    inp, out = fields.random((3, 3, 3, 2)), fields.sentinel((3, 3, 3))
    info = {}
    st(inp, out, exec_info=info)
    assert info["origin"] == {"inp": (0, 0, 0, 0), "out": (0, 0, 0)}
    fields.assert_close(out, inp[..., 0] - inp[..., 1])
    # the reported origins are valid origin= arguments, as in GT4Py
    out2 = fields.sentinel((3, 3, 3))
    st(inp, out2, origin={"inp": (1, 0, 1, 0), "out": (1, 0, 1)}, domain=(2, 3, 2))
    fields.assert_close(out2[1:, :, 1:], (inp[..., 0] - inp[..., 1])[1:, :, 1:])
    fails(fields, ValueError, "data dimensions must be 0", lambda: st(
        inp, out2, origin={"inp": (1, 0, 1, 1)}, domain=(2, 3, 2)), inp, out2)


def test_exec_info_aggregates_per_stencil(fields, any_backend):
    copy = build(any_backend, copy_defn)
    lap = build(any_backend, lap_defn)
    inp, out = fields.random((5, 5, 3)), fields.sentinel((5, 5, 3))
    info = {"__aggregate_data": True}
    for _ in range(3):
        copy(inp, out, exec_info=info)
    lap(inp, out, exec_info=info)
    stats = {k: v for k, v in info.items() if isinstance(v, dict) and "ncalls" in v}
    assert len(stats) == 2
    (copy_id, copy_stats), = [(k, v) for k, v in stats.items() if k.startswith("copy_defn")]
    (lap_id, lap_stats), = [(k, v) for k, v in stats.items() if k.startswith("lap_defn")]
    assert copy_stats["ncalls"] == 3 and lap_stats["ncalls"] == 1
    assert copy_stats["total_call_time"] >= copy_stats["call_time"] > 0.0
    assert copy_stats["total_run_time"] >= copy_stats["run_time"] >= 0.0
    assert lap_stats["call_time"] == pytest.approx(
        lap_stats["call_end_time"] - lap_stats["call_start_time"])
    assert lap_stats["run_time"] == pytest.approx(info["run_end_time"] - info["run_start_time"])
    assert any_backend in copy_id


def scaled_defn(F):
    """The same definition, annotated with gtscript's or GT4Py's Field."""

    def scaled(inp: F[np.float64], out: F[np.float64], *, weight: np.float64 = 2.0):
        with computation(PARALLEL), interval(...):
            out = weight * inp

    return scaled


def test_exec_info_keys_are_gt4pys(fields):
    """The same keys (and nesting) as GT4Py 1.1's numpy backend fills."""
    gt4py_gtscript = _gt4py()
    theirs = gt4py_gtscript.stencil(backend="numpy", definition=scaled_defn(gt4py_gtscript.Field))
    ours = gtscript.stencil("cpu", scaled_defn(Field))
    a = fields.random((4, 4, 4))
    infos = []
    for st in (theirs, ours):
        info = {"__aggregate_data": True}
        st(a, np.zeros_like(a), exec_info=info)
        st(a, np.zeros_like(a), exec_info=info)
        infos.append(info)
    their_top = {k for k, v in infos[0].items() if not isinstance(v, dict) or k == "origin"}
    assert their_top <= set(infos[1])
    assert tuple(infos[0]["domain"]) == infos[1]["domain"]
    assert infos[0]["origin"] == infos[1]["origin"]
    their_stats = next(v for k, v in infos[0].items() if isinstance(v, dict) and "ncalls" in v)
    our_stats = next(v for k, v in infos[1].items() if isinstance(v, dict) and "ncalls" in v)
    assert set(their_stats) == set(our_stats) and our_stats["ncalls"] == their_stats["ncalls"] == 2


def _gt4py():
    os.environ.setdefault("GT_CACHE_ROOT", tempfile.mkdtemp(prefix="gt4py-cache-"))
    from gt4py.cartesian import gtscript as gt4py_gtscript  # a test dependency

    return gt4py_gtscript


# ========================================================================= 2. conveniences

def test_scalar_defaults_are_used_when_omitted(fields, any_backend):
    st = build(any_backend, scale_defn)
    inp = fields.random((4, 3, 2))
    for kwargs, (w, s) in [({}, (2.0, 3)), ({"weight": 0.5}, (0.5, 3)), ({"shift": -1}, (2.0, -1)),
                           ({"weight": 1.5, "shift": 7}, (1.5, 7))]:
        out = fields.sentinel((4, 3, 2))
        st(inp, out, **kwargs)
        fields.assert_close(out, w * inp + s)


def positional_default_defn(inp: Field[np.float64], out: Field[np.float64], w: np.float32 = 0.25,
                            flag: bool = True):
    with computation(PARALLEL), interval(...):
        out = w * inp if flag else inp


def test_positional_scalar_defaults(fields, any_backend):
    st = build(any_backend, positional_default_defn)
    inp = fields.random((3, 4, 2))
    for args, expect in [((), 0.25 * inp), ((np.float32(0.5),), 0.5 * inp),
                         ((0.5, False), inp)]:
        out = fields.sentinel((3, 4, 2))
        st(inp, out, *args)
        fields.assert_close(out, expect)
    assert inspect.signature(st).parameters["w"].default == 0.25


def test_scalar_defaults_in_signature_and_repr(any_backend):
    st = build(any_backend, scale_defn)
    sig = inspect.signature(st)
    assert sig.parameters["weight"].default == 2.0 and sig.parameters["shift"].default == 3
    assert sig.parameters["inp"].default is inspect.Parameter.empty
    options = ["domain", "origin", "validate_args", "exec_info", "global_origin", "global_domain"]
    assert list(sig.parameters)[-6:] == options or list(sig.parameters)[-7:] == options + ["stream"]
    assert "weight: float64 = 2.0" in repr(st) and "shift: int64 = 3" in repr(st)


def test_scalar_defaults_match_gt4py(fields):
    gt4py_gtscript = _gt4py()
    theirs = gt4py_gtscript.stencil(backend="numpy", definition=scaled_defn(gt4py_gtscript.Field))
    inp = fields.random((4, 3, 2))
    expected = np.zeros_like(inp)
    theirs(inp, expected)
    np.testing.assert_allclose(expected, 2.0 * inp)
    for backend in ("cpu", "numpy"):
        out = np.zeros_like(inp)
        gtscript.stencil(backend, scaled_defn(Field))(inp, out)
        np.testing.assert_allclose(out, expected, rtol=1e-14)


def test_a_default_of_the_wrong_kind_is_refused_at_build(backend):
    def bad_default_defn(inp: Field[np.float64], out: Field[np.float64], *,
                         weight: np.float64 = "x"):
        with computation(PARALLEL), interval(...):
            out = weight * inp

    with pytest.raises(TypeError, match="'weight'"):
        gtscript.stencil(backend, bad_default_defn)


def test_parameters_inlined_away_may_be_none_or_omitted(fields, any_backend):
    off = build(any_backend, optional_defn, externals={"USE_EXTRA": False})
    inp = fields.random((4, 4, 3))
    for call in (lambda o: off(inp, None, o, None), lambda o: off(inp=inp, out=o),
                 lambda o: off(inp, inp, o, 2.0)):
        out = fields.sentinel((4, 4, 3))
        call(out)
        fields.assert_close(out, inp)
    info = {}
    off(inp, None, fields.sentinel((4, 4, 3)), exec_info=info)
    assert set(info["origin"]) == {"inp", "out"}

    on = build(any_backend, optional_defn, externals={"USE_EXTRA": True})
    extra, out = fields.random((4, 4, 3)), fields.sentinel((4, 4, 3))
    on(inp, extra, out, 0.5)
    fields.assert_close(out, inp + 0.5 * extra)
    fails(fields, TypeError, r"'extra' is None", lambda: on(inp, None, out, 0.5), inp, out)
    fails(fields, TypeError, r"missing required argument 'factor'",
          lambda: on(inp=inp, extra=extra, out=out), inp, extra, out)
    fails(fields, TypeError, r"'factor'", lambda: on(inp, extra, out, None), inp, extra, out)


def test_ij_only_stencils_need_no_domain(fields, any_backend):
    st = build(any_backend, ij_only_defn)
    inp, out = fields.random((5, 6)), fields.sentinel((5, 6))
    info = {}
    st(inp, out, exec_info=info)
    assert info["domain"] == (5, 6, 1)
    fields.assert_close(out, 2.0 * inp + 1.0)


def test_negative_origin_where_only_positive_offsets_are_read(fields, any_backend):
    st = build(any_backend, shift2_defn)
    inp, out = fields.random((8, 3, 2)), fields.sentinel((8, 3, 2))
    before = out.copy()
    st(inp, out, origin={"inp": (-2, 0, 0), "out": (0, 0, 0)}, domain=(8, 3, 2))
    fields.assert_written_only_in(out, before, (0, 0, 0), (8, 3, 2), inp)
    # the read at +2 from origin -1 reaches index 8 at the last point: outside
    err = fails(fields, ValueError, r"'inp'.*-1", lambda: st(
        inp, out, origin={"inp": (-1, 0, 0), "out": (0, 0, 0)}, domain=(8, 3, 2)), inp, out)
    assert "1..8" in str(err)
    # and a negative origin is still refused where it reads below index 0
    lap = build(any_backend, lap_defn)
    fails(fields, ValueError, r"'inp'", lambda: lap(
        inp, out, origin={"inp": (0, 0, 0), "out": (1, 1, 0)}, domain=(6, 1, 2)), inp, out)
    fails(fields, ValueError, r"'out'", lambda: lap(
        inp, out, origin={"inp": (1, 1, 0), "out": (-1, 1, 0)}, domain=(6, 1, 2)), inp, out)


@pytest.mark.parametrize("kwargs", [
    dict(origin=(2**62, 0, 0), domain=(2**62, 1, 1)),
    dict(origin=(-(2**63), 0, 0), domain=(1, 1, 1)),
    dict(origin=(0, 0, 2**63 - 1), domain=(1, 1, 1)),
    dict(origin=(0, 0, 0), domain=(1, 1, 2**63 - 1)),
    dict(origin={"inp": (-(2**63), 0, 0)}),
    dict(origin=(2**64, 0, 0)),
    dict(domain=(2**63, 1, 1)),
])
def test_huge_origins_and_domains_are_errors_not_overflows(fields, any_backend, kwargs):
    st = build(any_backend, shift2_defn)
    inp, out = fields.random((6, 3, 2)), fields.sentinel((6, 3, 2))
    fails(fields, ValueError, r"out of range|needs indices|needs levels|at most 64 bits",
          lambda: st(inp, out, **kwargs), inp, out)


# ================================================================================ 3. arrays

class WithInterface:
    """Exposes another array's memory through __array_interface__ only."""

    def __init__(self, arr):
        self._arr = arr
        self.__array_interface__ = arr.__array_interface__


class WithArray:
    """Hands out its own array (no copy) from __array__, as xarray and pandas do."""

    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr


class CopyingArray:
    """An __array__ that can only copy (a lazily computed array, say)."""

    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("this object cannot give a view")
        return self._arr.copy()


@pytest.mark.parametrize("wrap", [memoryview, WithInterface, WithArray],
                         ids=["memoryview", "array_interface", "array_method"])
def test_array_likes_viewed_without_copy_are_inputs_and_outputs(fields, any_backend, wrap):
    st = build(any_backend, lap_defn)
    inp, out = fields.random((6, 5, 3)), fields.sentinel((6, 5, 3))
    before = out.copy()
    st(wrap(inp), wrap(out))
    c = inp[1:-1, 1:-1]
    expect = inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2] - 4.0 * c
    fields.assert_written_only_in(out, before, (1, 1, 0), (4, 3, 3), expect)


def test_bytearray_buffer_output(fields, backend):
    st = gtscript.stencil(backend, copy_defn)
    inp = fields.random((3, 4, 2))
    buf = bytearray(inp.nbytes)
    st(inp, memoryview(buf).cast("B").cast("d", (3, 4, 2)))
    np.testing.assert_array_equal(np.frombuffer(buf).reshape(3, 4, 2), inp)


def test_xarray_dataarrays(fields, any_backend):
    import xarray as xr  # a test dependency, as GT4Py is
    st = build(any_backend, copy_defn)
    inp = xr.DataArray(fields.random((4, 3, 2)), dims=("x", "y", "z"))
    out = xr.DataArray(np.full((4, 3, 2), fields.SENTINEL), dims=("x", "y", "z"))
    st(inp, out)
    np.testing.assert_array_equal(out.values, inp.values)


def test_outputs_that_would_need_a_copy_are_refused(fields, any_backend):
    st = build(any_backend, copy_defn)
    inp, out = fields.random((3, 3, 3)), fields.sentinel((3, 3, 3))
    # an input may be a copy: it is only read
    st(CopyingArray(inp), out)
    np.testing.assert_array_equal(out, inp)
    out[...] = fields.SENTINEL
    fails(fields, TypeError, r"'out'.*np\.asarray\(x\).*x\.values",
          lambda: st(inp, CopyingArray(out)), inp, out)
    readonly = memoryview(out.tobytes()).cast("d", out.shape)
    fails(fields, TypeError, r"'out'.*read-only", lambda: st(inp, readonly), inp, out)
    fails(fields, TypeError, r"'inp' must be an array", lambda: st(iter(inp), out), inp, out)


def test_a_read_list_or_tuple_is_converted_as_gt4py_converts_it(fields, any_backend):
    """An argument the stencil only reads may be a list, a tuple or nested ones: NumPy
    converts it (np.asarray, no dtype: GT4Py 1.1's numpy backend does the same), on every
    backend alike; its dtype is then checked as an array's is."""
    st = build(any_backend, plane_defn)
    inp, bias = fields.random((4, 3, 2)), fields.random((4, 3))
    out = fields.sentinel((4, 3, 2))
    st(inp.tolist(), tuple(map(tuple, bias)), out)
    np.testing.assert_array_equal(out, inp + bias[:, :, None])
    out[...] = fields.SENTINEL
    err = fails(fields, TypeError, r"'inp' has dtype int64 \(as NumPy converts it\)",
                lambda: st(inp.astype(int).tolist(), bias, out), out)
    assert "pass np.asarray(inp, dtype=np.float64), or declare Field[np.int64]" in str(err)
    err = fails(fields, TypeError, r"'inp' \(list\) could not be read as an array",
                lambda: st([[[1.0, 2.0]], [[3.0]]], bias, out), out)
    assert isinstance(err.__cause__, ValueError)


def test_a_written_list_is_refused_with_the_fix(fields, any_backend):
    """A list cannot be written in place: the result would be lost (GT4Py writes a copy)."""
    st = build(any_backend, copy_defn)
    inp = fields.random((3, 3, 3))
    for out in (np.zeros((3, 3, 3)).tolist(), tuple(np.zeros((3, 3, 3)).tolist())):
        err = fails(fields, TypeError, r"'out' is a (list|tuple), but the stencil writes it",
                    lambda: st(inp, out), inp)
        assert "pass np.asarray(data) and read the result from that array" in str(err)


def test_lists_against_gt4py_itself(fields):
    """GT4Py 1.1's numpy backend, run: a read list or tuple gives what its array gives, the
    same as gtscript's result; a written list is left as it was (the result is lost, so
    gtscript refuses it); an int list is computed with (GT4Py casts arrays silently too:
    gtscript refuses both, its no-implicit-cast rule)."""
    gt4py_gtscript = _gt4py()
    theirs = gt4py_gtscript.stencil(backend="numpy", definition=scaled_defn(gt4py_gtscript.Field))
    ours = gtscript.stencil("cpu", scaled_defn(Field))
    a = fields.random((3, 4, 2))
    for given in (a.tolist(), tuple(map(tuple, a.tolist()))):
        got = [np.zeros_like(a), np.zeros_like(a)]
        theirs(given, got[0])
        ours(given, got[1])
        np.testing.assert_array_equal(got[0], got[1])
        np.testing.assert_array_equal(got[1], 2.0 * a)
    written = np.zeros_like(a).tolist()
    theirs(a, written)
    assert np.all(np.asarray(written) == 0.0)
    with pytest.raises(TypeError, match="cannot be written in place"):
        ours(a, np.zeros_like(a).tolist())
    ints, out = (10 * a).astype(np.int64), np.zeros_like(a)
    theirs(ints.tolist(), out)
    np.testing.assert_array_equal(out, 2.0 * ints)
    with pytest.raises(TypeError, match="has dtype int64"):
        ours(ints.tolist(), np.zeros_like(a))


def test_converted_lists_leak_nothing(fields):
    """The array NumPy makes of a list lives for the call and no longer, whether the call
    runs or fails after the conversion (a later argument's error, the list's own dtype)."""
    import tracemalloc

    st = gtscript.stencil("cpu", plane_defn)
    inp, bias = fields.random((40, 40, 40)), fields.random((40, 40))
    good, ints = inp.tolist(), inp.astype(int).tolist()
    out, small = np.zeros((40, 40, 40)), np.zeros((40, 40, 39))
    calls = [lambda: st(good, bias, out), lambda: st(good, bias, small),
             lambda: st(good, bias, out.astype(np.float32)), lambda: st(ints, bias, out)]
    for call in calls:  # warm up: caches, the first call's allocations
        try:
            call()
        except (TypeError, ValueError):
            pass
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            for call in calls:
                try:
                    call()
                except (TypeError, ValueError):
                    pass
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 512 * 1024, grown  # one leaked conversion is 512,000 bytes


class GTArray(np.ndarray):
    """An ndarray carrying GT4Py's __gt_origin__ / __gt_dims__."""

    def __new__(cls, arr, origin=None, dims=None):
        obj = np.asarray(arr).view(cls)
        obj.__gt_origin__ = origin
        obj.__gt_dims__ = dims
        return obj


def test_gt_origin_sets_the_default_origin(fields, any_backend):
    st = build(any_backend, copy_defn)
    inp, out = fields.random((6, 5, 4)), fields.sentinel((6, 5, 4))
    before = out.copy()
    st(GTArray(inp, origin=(1, 2, 0)), GTArray(out, origin=(3, 1, 1)), domain=(2, 3, 3))
    fields.assert_written_only_in(out, before, (3, 1, 1), (2, 3, 3), inp[1:3, 2:5, 0:3])
    # an explicit origin wins, for every field (a tuple) or one (a dict)
    before = out.copy()
    st(GTArray(inp, origin=(1, 2, 0)), GTArray(out, origin=(3, 1, 1)), domain=(2, 2, 2),
       origin={"out": (0, 0, 0)})
    fields.assert_written_only_in(out, before, (0, 0, 0), (2, 2, 2), inp[1:3, 2:4, 0:2])
    before = out.copy()
    st(GTArray(inp, origin=(1, 2, 0)), GTArray(out, origin=(3, 1, 1)), domain=(2, 2, 2),
       origin=(0, 0, 0))
    fields.assert_written_only_in(out, before, (0, 0, 0), (2, 2, 2), inp[0:2, 0:2, 0:2])
    bad = GTArray(inp, origin=(1, "x", 0))
    fails(fields, ValueError, r"'inp' has __gt_origin__", lambda: st(bad, out, domain=(1, 1, 1)),
          inp, out)


def test_gt_dims_set_the_axis_order(fields, any_backend):
    st = build(any_backend, plane_defn)
    inp, bias = fields.random((5, 4, 3)), fields.random((5, 4))
    out_kij = np.full((3, 5, 4), fields.SENTINEL)
    # a (K, I, J) array and a (J, I) one, named as such
    st(GTArray(np.moveaxis(inp, 2, 0).copy(), dims=("K", "I", "J")),
       GTArray(bias.T.copy(), dims=["J", "I"]), GTArray(out_kij, dims=("K", "I", "J")))
    fields.assert_close(np.moveaxis(out_kij, 0, 2), inp + bias[:, :, None])
    out = fields.sentinel((5, 4, 3))
    fails(fields, ValueError, r"'bias' names its dimensions", lambda: st(
        inp, GTArray(bias, dims=("I", "K")), out), inp, bias, out)
    fails(fields, ValueError, r"'inp' names its dimensions", lambda: st(
        GTArray(inp, dims=("I", "I", "K")), bias, out), inp, bias, out)


def test_gt_dims_with_data_dimensions(fields, backend):
    st = gtscript.stencil(backend, vec_defn)
    inp = fields.random((2, 3, 4, 2))
    out = fields.sentinel((2, 3, 4))
    # data dimension first, then J, K, I; __gt_origin__ is in the array's own order too
    arr = GTArray(np.transpose(inp, (3, 1, 2, 0)).copy(), dims=("0", "J", "K", "I"),
                  origin=(0, 1, 2, 1))
    before = out.copy()
    st(arr, out, domain=(1, 2, 2), origin={"out": (0, 0, 0)})
    expect = (inp[..., 0] - inp[..., 1])[1:2, 1:3, 2:4]
    fields.assert_written_only_in(out, before, (0, 0, 0), (1, 2, 2), expect)


# ------------------------------------------------------------------------------ storage

def test_storage_keeps_data_dimension_dtypes_like_gt4py():
    data = np.arange(4 * 5 * 3 * 2, dtype=np.float64).reshape(4, 5, 3, 2)
    arr = storage.from_array(data, dtype=(np.float64, (2,)), aligned_index=(1, 1, 0))
    assert arr.shape == (4, 5, 3, 2) and arr.dtype == np.float64
    np.testing.assert_array_equal(arr, data)
    assert arr[1, 1, 0].__array_interface__["data"][0] % storage.ALIGNMENT == 0
    for make, args in ((storage.zeros, ()), (storage.ones, ()), (storage.empty, ()),
                       (storage.full, (7.0,))):
        a = make((4, 5, 3), *args, dtype=(np.float32, (2, 3)), aligned_index=(0, 1, 1))
        assert a.shape == (4, 5, 3, 2, 3) and a.dtype == np.float32
    assert np.all(storage.full((2, 2, 2), 7.0, dtype=(np.float64, (3,))) == 7.0)
    import gt4py.storage as gs
    theirs = gs.from_array(data, dtype=(np.float64, (2,)), backend="numpy")
    assert theirs.shape == arr.shape
    assert gs.zeros((4, 5, 3), dtype=(np.float32, (2, 3)), backend="numpy").shape == \
        storage.zeros((4, 5, 3), dtype=(np.float32, (2, 3))).shape


@pytest.mark.parametrize("name, mapped", [("gt:cpu_ifirst", "cpu"), ("gt:cpu_kfirst", "cpu"),
                                          ("dace:cpu", "cpu"), ("debug", "numpy")])
def test_storage_takes_gt4py_backend_names_with_one_note(monkeypatch, name, mapped):
    monkeypatch.setattr(storage, "_noted", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = storage.zeros((3, 4, 5), backend=name)
        b = storage.ones((3, 4, 5), backend=name)
    notes = [w for w in caught if name in str(w.message)]
    assert len(notes) == 1 and repr(mapped) in str(notes[0].message)
    assert notes[0].filename == __file__  # points at the caller
    assert a.strides == storage.zeros((3, 4, 5), backend=mapped).strides and np.all(b == 1)


def test_storage_gpu_names_map_to_cuda(monkeypatch):
    monkeypatch.setattr(storage, "_noted", set())
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.warns(UserWarning, match="'cuda'"), pytest.raises(RuntimeError, match="CuPy"):
            storage.zeros((2, 2, 2), backend="gt:gpu")
    with pytest.warns(UserWarning, match="'dace:gpu' is gtscript's 'cuda'"):
        assert storage.layout((4, 4, 4), np.float64, backend="dace:gpu").order == "F"


# ---------------------------------------------------------------- the domain rule, at random

def _expected_domain(shapes, origins, uppers, lowers, domain):
    """The rule of docs/calling.md, written independently: the domain a call computes, or
    None when it must be refused. shapes/origins per field (3 axes), uppers/lowers per field
    the offsets read beyond/below each point."""
    if domain is not None:
        if min(domain) <= 0:
            return None
        chosen = domain
    else:
        chosen = []
        for a in range(3):
            rooms = [s[a] - o[a] for s, o in zip(shapes, origins)]
            sizes = [r - u[a] for r, u in zip(rooms, uppers)]
            if len(set(rooms)) > 1 and len(set(sizes)) > 1:
                return None
            if min(sizes) <= 0:
                return None
            chosen.append(min(sizes))
    for s, o, u, lo in zip(shapes, origins, uppers, lowers):
        for a in range(3):
            if o[a] + lo[a] < 0 or o[a] + chosen[a] + u[a] > s[a]:
                return None
    return tuple(chosen)


def test_the_domain_rule_at_random(fields, backend):
    """shift2 reads inp at +2 along I only: random shapes, origins (negative ones too) and
    domains either run exactly the domain the rule gives, or are refused with nothing
    written."""
    st = gtscript.stencil(backend, shift2_defn)
    rng = np.random.default_rng(7)
    ran = refused = 0
    for _ in range(300):
        base = rng.integers(1, 8, size=3)
        shapes = [tuple(int(n + rng.integers(0, 3) * (rng.random() < 0.2)) for n in base)
                  for _ in range(2)]
        origins = [tuple(int(rng.integers(-2, 3)) if rng.random() < 0.2 else 0 for _ in range(3))
                   for _ in range(2)]
        domain = (None if rng.random() < 0.6
                  else tuple(int(rng.integers(0, 5)) for _ in range(3)))
        uppers, lowers = [(2, 0, 0), (0, 0, 0)], [(2, 0, 0), (0, 0, 0)]
        expect = _expected_domain(shapes, origins, uppers, lowers, domain)
        inp, out = fields.random(shapes[0]), fields.sentinel(shapes[1])
        kwargs = dict(origin={"inp": origins[0], "out": origins[1]}, domain=domain)
        if expect is None:
            fails(fields, ValueError, ".", lambda: st(inp, out, **kwargs), inp, out)
            refused += 1
            continue
        before = out.copy()
        info = {}
        st(inp, out, exec_info=info, **kwargs)
        assert info["domain"] == expect
        (oi, oj, ok), (pi, pj, pk) = origins
        ni, nj, nk = expect
        values = inp[oi + 2:oi + 2 + ni, oj:oj + nj, ok:ok + nk]
        fields.assert_written_only_in(out, before, origins[1], expect, values)
        ran += 1
    assert ran > 20 and refused > 20  # both outcomes are exercised
