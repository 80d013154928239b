"""min and max are NumPy's np.minimum and np.maximum to the bit, on every backend: a NaN
operand gives NaN, and on a tie the second operand is the result, so min(0.0, -0.0) is -0.0
and min(-0.0, 0.0) is 0.0 (a sign of zero that a later division turns into -inf or inf).

The cpu backend's kernels and the cuda backend's helpers (on the host emulation) each have
their own code for it; these tests compare them with NumPy, sign bits and NaN included, in
point-wise loop nests (vectorised), in column sweeps and with scalar operands, and with GT4Py's
numpy and debug backends themselves.
"""

import itertools

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, interval
from cuda_emulation.runner import compiler, emulate

VALUES = (0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan)


def pairs(dt, repeat=3):
    """Every ordered pair of VALUES, along I (repeated, so vector loops run full vectors)."""
    a, b = zip(*itertools.product(VALUES, VALUES))
    a = np.tile(np.array(a, dtype=dt), repeat)
    b = np.tile(np.array(b, dtype=dt), repeat)
    shape = (a.size, 2, 3)
    return (np.broadcast_to(a[:, None, None], shape).copy(),
            np.broadcast_to(b[:, None, None], shape).copy())


def assert_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN where NumPy has none, or none"
    same = (got == want) & (np.signbit(got) == np.signbit(want))
    assert (same | nan).all(), (f"{what}: {np.count_nonzero(~(same | nan))} values differ from "
                                f"NumPy's, e.g. {got[~(same | nan)][:4]} for {want[~(same | nan)][:4]}")


def parallel_defn(dt):
    def minmax(a: Field[dt], b: Field[dt], mn: Field[dt], mx: Field[dt]):
        with computation(PARALLEL), interval(...):
            mn = min(a, b)
            mx = max(a, b)
    return minmax


def sweep_defn(dt):
    # a column sweep (the level below is read), min/max on the way
    def minmax_sweep(a: Field[dt], b: Field[dt], mn: Field[dt], mx: Field[dt]):
        with computation(FORWARD), interval(0, 1):
            mn = min(a, b)
            mx = max(a, b)
        with computation(FORWARD), interval(1, None):
            mn = min(a, b) + mn[0, 0, -1] * 0.0
            mx = max(a, b) + mx[0, 0, -1] * 0.0
    return minmax_sweep


def expected(a, b):
    with np.errstate(invalid="ignore"):
        mn, mx = np.minimum(a, b), np.maximum(a, b)
    # a sweep adds 0.0 * (the previous level): -0.0 + 0.0 is 0.0, and inf * 0.0 is NaN
    return mn, mx


def test_numpy_ties_are_the_second_operand():
    # what the backends are held to: NumPy itself, asked here rather than assumed
    assert np.signbit(np.minimum(0.0, -0.0)) and not np.signbit(np.minimum(-0.0, 0.0))
    assert np.signbit(np.maximum(0.0, -0.0)) and not np.signbit(np.maximum(-0.0, 0.0))
    a, b = pairs(np.float64)
    assert_bits(np.minimum(a, b), np.where((a < b) | np.isnan(a), a, b), "np.minimum")


#: literal operands of min/max: the cpu backend compiles a constant operand without a NaN check
#: (the constant first, a nonzero constant second, and +0.0 second are three different codes)
LITERALS = ("0.0", "-0.0", "1e-12", "50.0", "-2.5")


def literal_defn(dt, policy):
    lines = []
    for k, c in enumerate(LITERALS):
        lines += [f"            o{k}a = min(a, {c})", f"            o{k}b = max(a, {c})",
                  f"            o{k}c = min({c}, a)", f"            o{k}d = max({c}, a)"]
    outs = [f"o{k}{x}" for k in range(len(LITERALS)) for x in "abcd"]
    src = (f"def literals(a: Field[dt], {', '.join(o + ': Field[dt]' for o in outs)}):\n"
           f"    with computation({policy}):\n        with interval(...):\n" + "\n".join(lines) + "\n")
    namespace = {"Field": Field, "computation": computation, "interval": interval,
                 "PARALLEL": PARALLEL, "FORWARD": FORWARD, "dt": dt}
    exec(compile(src, "<min/max literals>", "exec"), namespace)
    namespace["literals"].__exec_source__ = src
    return namespace["literals"], outs


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("policy", ["PARALLEL", "FORWARD"])
def test_literal_operands(dt, backend, policy):
    values = np.array(VALUES + (1e-12, -1e-12, 50.0, -2.5, 3.0, -7.0), dtype=dt)
    a = np.broadcast_to(np.tile(values, 3)[:, None, None], (3 * values.size, 2, 4)).copy()
    defn, outs = literal_defn(dt, policy)
    got = {o: np.full_like(a, 123.0) for o in outs}
    gtscript.stencil(backend, defn)(a, **got)
    for k, c in enumerate(LITERALS):
        c = dt(float(c))
        with np.errstate(invalid="ignore"):
            want = {"a": np.minimum(a, c), "b": np.maximum(a, c), "c": np.minimum(c, a),
                    "d": np.maximum(c, a)}
        for x, w in want.items():
            assert_bits(got[f"o{k}{x}"], w, f"{backend} {policy} {np.dtype(dt).name} "
                        f"{'min' if x in 'ac' else 'max'} with {LITERALS[k]} ({x})")


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("backend", ["cpu", "numpy"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_point_wise(dt, backend, order):
    a, b = pairs(dt)
    a, b = np.asarray(a, order=order), np.asarray(b, order=order)
    mn, mx = np.full_like(a, 7), np.full_like(a, 7)
    gtscript.stencil(backend, parallel_defn(dt))(a, b, mn, mx)
    want_mn, want_mx = expected(a, b)
    assert_bits(mn, want_mn, f"min ({backend}, {order})")
    assert_bits(mx, want_mx, f"max ({backend}, {order})")


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_in_a_column_sweep(backend):
    a, b = pairs(np.float64)
    mn, mx = np.full_like(a, 7), np.full_like(a, 7)
    gtscript.stencil(backend, sweep_defn(np.float64))(a, b, mn, mx)
    want_mn, want_mx = expected(a, b)
    with np.errstate(invalid="ignore"):
        want_mn[:, :, 1:] = want_mn[:, :, 1:] + want_mn[:, :, :-1] * 0.0
        want_mx[:, :, 1:] = want_mx[:, :, 1:] + want_mx[:, :, :-1] * 0.0
    assert_bits(mn, want_mn, f"min in a sweep ({backend})")
    assert_bits(mx, want_mx, f"max in a sweep ({backend})")


def test_scalar_operands():
    # scalars, and 1 / min(...) to show the sign of a zero result
    def scalars(out: Field[np.float64], *, s: float, t: float):
        with computation(PARALLEL), interval(...):
            out = 1.0 / min(s, t) + 1.0 / max(t, s)
    for s, t in [(0.0, -0.0), (-0.0, 0.0), (2.0, -0.0), (np.inf, 0.0), (np.nan, 0.0)]:
        with np.errstate(divide="ignore", invalid="ignore"):
            want = 1.0 / np.minimum(s, t) + 1.0 / np.maximum(t, s)
        for backend in ("cpu", "numpy"):
            out = np.zeros((2, 2, 2))
            with np.errstate(divide="ignore", invalid="ignore"):
                gtscript.stencil(backend, scalars)(out, s=s, t=t)
            assert_bits(out, np.full_like(out, want), f"min/max({s}, {t}) ({backend})")


@pytest.mark.skipif(compiler() is None, reason="no host C compiler for the cuda emulation")
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_cuda_emulation(dt):
    a, b = pairs(dt, repeat=1)
    mn, mx = np.full_like(a, 7), np.full_like(a, 7)
    emulate(gtscript.stencil("cuda", parallel_defn(dt)), (4, 2), False)(a, b, mn, mx)
    want_mn, want_mx = expected(a, b)
    assert_bits(mn, want_mn, "min (cuda, emulated)")
    assert_bits(mx, want_mx, "max (cuda, emulated)")


@pytest.mark.parametrize("gt4py_backend", ["numpy", "debug"])
def test_gt4py_gives_the_same_bits(gt4py_backend):
    # GT4Py's reference backends compute min/max as NumPy does, ties and NaN included (its
    # gt:cpu_kfirst does not: std::min's first operand on a tie, and min(1.0, nan) == 1.0)
    gt = pytest.importorskip("gt4py.cartesian.gtscript")
    a, b = pairs(np.float64, repeat=1)
    ours = [np.full_like(a, 7), np.full_like(a, 7)]
    theirs = [np.full_like(a, 7), np.full_like(a, 7)]
    gtscript.stencil("cpu", parallel_defn(np.float64))(a, b, *ours)
    gt.stencil(backend=gt4py_backend, definition=gt4py_parallel_defn(gt.Field))(
        a, b, *theirs, origin=(0, 0, 0))
    for got, want, what in zip(ours, theirs, ("min", "max")):
        assert_bits(got, want, f"{what}: gtscript cpu vs GT4Py {gt4py_backend}")


def gt4py_parallel_defn(F):
    def minmax(a: F[np.float64], b: F[np.float64], mn: F[np.float64], mx: F[np.float64]):
        with computation(PARALLEL), interval(...):
            mn = min(a, b)
            mx = max(a, b)
    return minmax
