"""The cpu backend's ``vector_math=True`` option (csrc/backend/cpu/vecmath.c): vectorised exp,
log, log10, pow, the trigonometric, inverse and hyperbolic functions, erf, erfc and cbrt call
glibc's libmvec SIMD versions. Their results are held to within 4
ulps of libm's (called here through ctypes: NumPy has SIMD versions of its own) on every
input, special values and the edges of each function's range included; without the option
the kernels keep libm's results bit for bit. Also: the option is part of the cache key, a kernel built with it loads from the
disk cache in a new process (libmvec loaded before the object is linked), bad values are
refused, and a guarded call (an ``if``) still computes only what the branch computes."""

import ctypes
import ctypes.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, exp, interval, log, log10
from libm_reference import libm

#: glibc's libmvec is here: the option must then call it (on another C library it cannot)
HAVE_LIBMVEC = ctypes.util.find_library("mvec") is not None
LIBMVEC = ctypes.CDLL(ctypes.util.find_library("mvec")) if HAVE_LIBMVEC else None
ULPS = 4
def libm_results(dt):
    a, b = inputs(dt)
    return {"e": libm("exp", dt, a), "lg": libm("log", dt, b), "l10": libm("log10", dt, b),
            "pw": libm("pow", dt, b, a), "pw2": libm("pow", dt, b, np.full_like(b, 0.37))}


def math_defn(dt):
    def math(a: Field[dt], b: Field[dt], e: Field[dt], lg: Field[dt], l10: Field[dt],
             pw: Field[dt], pw2: Field[dt]):
        with computation(PARALLEL), interval(...):
            e = exp(a)
            lg = log(b)
            l10 = log10(b)
            pw = b ** a
            pw2 = pow(b, 0.37)
    return math


def inputs(dt, n=4096, seed=0):
    """exp's arguments over its whole range (overflow and underflow included), log's and pow's
    positive bases over many decades, and special values of both mixed in."""
    rng = np.random.default_rng(seed)
    lim = 750.0 if dt == np.float64 else 110.0
    a = rng.uniform(-lim, lim, n)
    a[: n // 4] = rng.uniform(-3, 3, n // 4)
    b = np.exp(rng.uniform(np.log(np.finfo(dt).tiny), np.log(np.finfo(dt).max), n))
    b[: n // 4] = rng.uniform(0, 4, n // 4)
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 0.5, 2.0, 1e-300], dtype=np.float64)
    a[-40:], b[-40:] = np.tile(special, 4), np.repeat(special, 4)
    shape = (n // 16, 4, 4)
    return a.astype(dt).reshape(shape), b.astype(dt).reshape(shape)


def ulp_distance(x, y):
    """|x - y| in units in the last place (NaN against NaN and equal infinities: 0)."""
    x, y = np.asarray(x), np.asarray(y)
    it = np.int64 if x.dtype == np.float64 else np.int32
    xi, yi = x.view(it).astype(np.int64), y.view(it).astype(np.int64)
    low = np.iinfo(it).min
    # order the bit patterns as the values: negative numbers count down from zero
    xi = np.where(xi < 0, low - xi, xi)
    yi = np.where(yi < 0, low - yi, yi)
    d = np.abs(xi - yi)
    both_nan = np.isnan(x) & np.isnan(y)
    return np.where(both_nan, 0, d)


def run(backend, dt, order="C", **options):
    a, b = inputs(dt)
    a, b = np.asarray(a, order=order), np.asarray(b, order=order)
    outs = {n: np.zeros_like(a) for n in ("e", "lg", "l10", "pw", "pw2")}
    st = gtscript.stencil(backend, math_defn(dt), **options)
    with np.errstate(all="ignore"):
        st(a, b, **outs)
    return st, outs


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_within_four_ulps_of_libm(dt, order):
    want = libm_results(dt)
    st, got = run("cpu", dt, order, vector_math=True)
    for name in want:
        nan = np.isnan(want[name])
        assert np.array_equal(np.isnan(got[name]), nan), f"{name}: NaN where libm has none, or none"
        inf = np.isinf(want[name])
        assert np.array_equal(got[name][inf], want[name][inf]), f"{name}: infinities differ"
        worst = int(ulp_distance(got[name], want[name]).max())
        assert worst <= ULPS, f"{name} ({np.dtype(dt).name}, {order}): {worst} ulps from libm"
    if HAVE_LIBMVEC:
        assert "@_ZGV" in st.source(), "the kernel calls no libmvec function"


#: gtscript's name -> (libm's name, number of arguments, the inputs' range)
OTHERS = {"sin": ("sin", 1, (-20, 20)), "cos": ("cos", 1, (-20, 20)), "tan": ("tan", 1, (-3, 3)),
          "arcsin": ("asin", 1, (-1, 1)), "arccos": ("acos", 1, (-1, 1)),
          "arctan": ("atan", 1, (-50, 50)), "arctan2": ("atan2", 2, (-5, 5)),
          "sinh": ("sinh", 1, (-30, 30)), "cosh": ("cosh", 1, (-30, 30)),
          "tanh": ("tanh", 1, (-10, 10)), "arcsinh": ("asinh", 1, (-1e3, 1e3)),
          "arccosh": ("acosh", 1, (1, 1e3)), "arctanh": ("atanh", 1, (-1, 1)),
          "erf": ("erf", 1, (-6, 6)), "erfc": ("erfc", 1, (-6, 27)), "cbrt": ("cbrt", 1, (-1e6, 1e6))}


def other_defn(name, dt):
    """out = name(a) (or name(a, b)), written as a definition's text (builtins are called by
    their names in the source)."""
    args = "a, b" if OTHERS[name][1] == 2 else "a"
    src = (f"def other(a: Field[dt], b: Field[dt], out: Field[dt]):\n"
           f"    with computation(PARALLEL), interval(...):\n"
           f"        out = {name}({args})\n")
    namespace = {"Field": Field, "computation": computation, "interval": interval,
                 "PARALLEL": PARALLEL, "dt": dt, name: getattr(gtscript, name)}
    exec(compile(src, f"<{name}>", "exec"), namespace)
    namespace["other"].__exec_source__ = src
    return namespace["other"]


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(OTHERS))
def test_other_functions_within_four_ulps_of_libm(name, dt):
    c_name, nargs, (lo, hi) = OTHERS[name]
    rng = np.random.default_rng(5)
    shape = (64, 4, 8)
    a = rng.uniform(lo, hi, shape).astype(dt)
    b = rng.uniform(lo, hi, shape).astype(dt)
    a.reshape(-1)[:6] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, lo], dtype=dt)
    want = libm(c_name, dt, a, b) if nargs == 2 else libm(c_name, dt, a)
    got = np.zeros_like(a)
    st = gtscript.stencil("cpu", other_defn(name, dt), vector_math=True)
    with np.errstate(all="ignore"):
        st(a, b, got)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name}: NaN where libm has none, or none"
    worst = int(ulp_distance(got, want).max())
    assert worst <= ULPS, f"{name} ({np.dtype(dt).name}): {worst} ulps from libm"
    if HAVE_LIBMVEC and hasattr(LIBMVEC, f"_ZGVbN2{'vv' if nargs == 2 else 'v'}_{c_name}"):
        assert "@_ZGV" in st.source(), f"{name}: the kernel calls no libmvec function"


def test_vector_math_is_used_and_differs_from_libm_somewhere():
    # the measurement above would pass on libm's own results: show libmvec's were measured
    if not HAVE_LIBMVEC:
        pytest.skip("no libmvec (not glibc on x86-64): the option calls libm")
    want = libm_results(np.float64)
    _, got = run("cpu", np.float64, vector_math=True)
    differ = sum(int(np.count_nonzero(ulp_distance(got[n], want[n]))) for n in want)
    assert differ > 0, "every result equals libm's: the vector functions did not run"


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_off_by_default_and_bitwise_libm(dt):
    want = libm_results(dt)
    st, got = run("cpu", dt)
    assert "_ZGV" not in st.source()
    for name in want:
        assert int(ulp_distance(got[name], want[name]).max()) == 0, name


def test_guarded_calls_compute_only_their_branch():
    # an if-converted vector loop computes exp/log of the lanes whose branch is not taken too:
    # none of those values may reach the result, and the results stay within the ulps
    def guarded(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            if a > 0.0:
                out = log(a) ** 0.5 if a > 1.0 else exp(-a)
            else:
                out = exp(a * 800.0)  # overflows where a < 0 is large: only there
    a = np.linspace(-2.0, 3.0, 40 * 6 * 5).reshape(40, 6, 5)
    a[::7] = 0.0
    outs = {}
    for backend, opts in (("numpy", {}), ("cpu", {"vector_math": True})):
        out = np.full_like(a, 7.0)
        with np.errstate(all="ignore"):
            gtscript.stencil(backend, guarded, **opts)(a, out)
        outs[backend] = out
    assert int(ulp_distance(outs["cpu"], outs["numpy"]).max()) <= ULPS


def test_in_column_blocks_and_sweeps():
    # a FORWARD sweep with exp and pow, in C order (column blocks, the loop over a block's
    # columns vectorised) and F order (level by level, vectorised along I)
    def sweep(a: Field[np.float64], b: Field[np.float64]):
        with computation(FORWARD), interval(0, 1):
            b = exp(a)
        with computation(FORWARD), interval(1, None):
            if a > 0.3:
                b = exp(a - 0.5 * b[0, 0, -1]) + b[0, 0, -1] ** 0.5
            else:
                b = 0.5 * b[0, 0, -1]
    rng = np.random.default_rng(3)
    for order in ("C", "F"):
        a = np.asarray(rng.random((3, 64, 12)), order=order)
        want = np.zeros_like(a)
        gtscript.stencil("numpy", sweep)(a, want)
        got = np.zeros_like(a)
        gtscript.stencil("cpu", sweep, vector_math=True)(a, got)
        # values carried down the column: each level may add a few ulps
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_option_is_checked_and_keyed():
    def f(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = exp(a)
    with pytest.raises(TypeError, match="vector_math"):
        gtscript.stencil("cpu", f, vector_math="yes")
    with pytest.raises(ValueError, match="vector_math"):
        gtscript.stencil("cpu", f, vector_math=2)
    plain, vec = gtscript.stencil("cpu", f), gtscript.stencil("cpu", f, vector_math=True)
    assert plain.cache_key != vec.cache_key
    # the numpy and cuda backends take it and compute with their own math library
    a = np.linspace(0, 1, 60).reshape(3, 4, 5)
    out = np.zeros_like(a)
    gtscript.stencil("numpy", f, vector_math=True)(a, out)
    assert np.array_equal(out, np.exp(a))


def test_loads_from_the_disk_cache_in_a_new_process(tmp_path):
    # the object names libmvec's functions: they resolve when the kernel is loaded from disk
    # by a process that never built one (libmvec is loaded when the JIT starts)
    script = textwrap.dedent("""
        import numpy as np
        import gtscript
        from gtscript import PARALLEL, Field, computation, exp, interval

        def f(a: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = exp(a) + a ** 0.3

        info = {}
        st = gtscript.stencil("cpu", f, vector_math=True, build_info=info)
        a = np.linspace(0, 2, 64 * 4 * 8).reshape(64, 4, 8)
        out = np.zeros_like(a)
        st(a, out)
        assert np.allclose(out, np.exp(a) + a ** 0.3, rtol=1e-14), "wrong values"
        print(info["module_source"])
    """)
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(tmp_path / "cache"))
    path = tmp_path / "vector_math_cached.py"
    path.write_text(script)
    sources = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True)
        assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
        sources.append(done.stdout.strip())
    assert sources == ["build", "disk"]
