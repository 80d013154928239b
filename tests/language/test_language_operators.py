"""Operators, casts and builtins with NumPy's results: // and % with Python's sign rules for
ints and bitwise equal to np.floor_divide / np.remainder for floats (special values
included), **, and/or/not, casts, and every builtin of DESIGN.md, including the NaN/inf
behaviour of isfinite, isinf, isnan, min and max."""

import numpy as np
import pytest

import gtscript
from gtscript import (
    PARALLEL, Field, arccos, arcsin, arctan, arctan2, ceil, computation, cos, cosh, exp, floor,
    interval, isfinite, isinf, isnan, log, log10, sin, sinh, sqrt, tan, tanh, trunc,
)
from language_helpers import FLOATS, LAYOUTS, as_layout, assert_same_bits, check_construct
from libm_reference import libm

SHAPE = (6, 5, 4)


def special_values(rng, dt, shape=SHAPE):
    """Random values with zeros of both signs, infinities, NaN and exact multiples mixed in."""
    v = rng.uniform(-10, 10, size=shape).astype(dt)
    flat = v.reshape(-1)
    picks = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, -3.0, 0.5, 1e-30],
                     dtype=dt)
    index = rng.choice(flat.size, size=flat.size // 3, replace=False)
    flat[index] = rng.choice(picks, size=index.size)
    return v


# ------------------------------------------------------------------------ // % on ints


def int_divmod_defn(it):
    def int_divmod(a: Field[it], b: Field[it], q: Field[it], r: Field[it], p: Field[it]):
        with computation(PARALLEL), interval(...):
            q = a // b
            r = a % b
            p = a ** 3 + b ** 0 - (a % 3) ** b
    return int_divmod


@pytest.mark.parametrize("it", [np.int32, np.int64])
def test_int_floordiv_mod_pow_follow_python(rng, it):
    a = rng.integers(-50, 50, SHAPE).astype(it)
    b = rng.integers(-7, 8, SHAPE).astype(it)
    b.reshape(-1)[:10] = 0  # NumPy gives 0 for x // 0 and x % 0
    b.reshape(-1)[10:20] = -1
    a.reshape(-1)[10] = np.iinfo(it).min  # INT_MIN // -1 wraps, as NumPy
    ea, eb = a.tolist(), b.tolist()
    with np.errstate(all="ignore"):
        q, r = np.floor_divide(a, b), np.remainder(a, b)
        cube = a.astype(np.int64) ** 3
        base = np.remainder(a, it(3)).astype(np.int64)
        powered = np.where(b >= 0, base ** np.maximum(b, 0), 0)  # negative powers give 0
        p = (cube + 1 - powered).astype(it)
    # Python's rules, point by point, where Python has an answer
    flat_a, flat_b = np.ravel(ea), np.ravel(eb)
    for x, y, qq, rr in zip(flat_a, flat_b, q.reshape(-1), r.reshape(-1)):
        if y not in (0, -1) or x != np.iinfo(it).min:
            if y != 0:
                assert (qq, rr) == (x // y, x % y)
    out = {n: np.zeros(SHAPE, it) for n in ("q", "r", "p")}
    check_construct(int_divmod_defn(it), {"a": a, "b": b, **out}, {"q": q, "r": r, "p": p},
                    ["q", "r", "p"])


# ------------------------------------------------------------------------ // % on floats


def float_divmod_defn(dt):
    def float_divmod(a: Field[dt], b: Field[dt], q: Field[dt], r: Field[dt], p: Field[dt]):
        with computation(PARALLEL), interval(...):
            q = a // b
            r = a % b
            p = a ** b
    return float_divmod


@pytest.mark.parametrize("dt", FLOATS)
def test_float_floordiv_mod_pow_bitwise_numpy(rng, dt):
    a, b = special_values(rng, dt), special_values(rng, dt)
    with np.errstate(all="ignore"):
        expected = {"q": np.floor_divide(a, b), "r": np.remainder(a, b), "p": np.power(a, b)}
    out = {n: np.zeros(SHAPE, dt) for n in expected}
    # ** calls pow(), which NumPy may vectorise with its own last-bit rounding: compared to
    # the dtype's precision; // and % are bitwise NumPy's, signed zeros included
    results = check_construct(float_divmod_defn(dt), {"a": a, "b": b, **out}, expected,
                              list(expected), bitwise=False)
    assert np.isnan(expected["r"]).any() and (expected["q"] == 0).any()
    for (backend, layout), res in results.items():
        for name in ("q", "r"):
            got, want = res[name], expected[name]
            known = ~np.isnan(want)
            assert np.array_equal(np.signbit(got)[known], np.signbit(want)[known])
            assert_same_bits(got, want, f"{name} vs NumPy ({backend}, {layout})")


def pow_literal_defn(dt):
    def pow_literal(a: Field[dt], h: Field[dt], r: Field[dt], s: Field[dt], o: Field[dt],
                    z: Field[dt]):
        with computation(PARALLEL), interval(...):
            h = a ** 0.5
            r = a ** -1.0
            s = a ** 2.0
            o = a ** 1.0
            z = a ** 0.0
    return pow_literal


@pytest.mark.parametrize("dt", FLOATS)
def test_float_pow_by_a_literal_is_numpys(rng, dt):
    # NumPy's ** computes a literal exponent of 0.5, -1, 2, 1 or 0 as a square root, a
    # reciprocal, a square, the value or one, not through pow() (whose x ** 0.5 differs from a
    # correctly rounded square root in the last bit for about one argument in a thousand);
    # so does the cpu backend (LLVM's simplifications of pow), to the bit, on many magnitudes.
    # The exceptions are the bases -0.0 and -inf of ** 0.5, where the cpu backend gives pow's
    # +0.0 and +inf and NumPy its square root's -0.0 and nan.
    a = np.concatenate([special_values(rng, dt).ravel(),
                        np.exp(rng.uniform(-80, 80, 2000 * 5 * 4 - 120)).astype(dt)])
    a = a.reshape(2000, 5, 4)
    edge = (a == -np.inf) | ((a == 0) & np.signbit(a))
    with np.errstate(all="ignore"):
        want = {"h": a ** 0.5, "r": a ** -1.0, "s": a ** 2.0, "o": a ** 1.0, "z": a ** 0.0}
    positive = ~np.isnan(a) & (a >= 0)
    assert np.array_equal(want["h"][positive], np.sqrt(a[positive]))
    if dt == np.float64:  # the sample tells a square root from pow() somewhere
        x = a[positive]
        assert (libm("pow", dt, x, np.full_like(x, 0.5)) != np.sqrt(x)).any()

    for backend in ("cpu", "numpy"):
        out = {n: np.zeros_like(a) for n in want}
        with np.errstate(all="ignore"):
            gtscript.stencil(backend, pow_literal_defn(dt))(a, **out)
        for name in want:
            keep = ~edge if (name == "h" and backend == "cpu") else np.ones(a.shape, bool)
            assert_same_bits(out[name][keep], want[name][keep], f"a ** {name} ({backend})")
            assert np.array_equal(np.signbit(out[name][keep & ~np.isnan(want[name])]),
                                  np.signbit(want[name][keep & ~np.isnan(want[name])]))
        if backend == "cpu":
            assert edge.any()
            assert np.array_equal(out["h"][edge], np.where(a[edge] == 0, 0.0, np.inf).astype(dt))
            assert not np.signbit(out["h"][edge]).any()


# ------------------------------------------------------------------------ logic and casts


def logic_cast_defn(dt):
    to_dt = dt  # a dtype named by a closure variable casts too

    def logic_cast(a: Field[dt], b: Field[dt], flags: Field[np.bool_], i: Field[np.int32],
                   f: Field[dt], g: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            flags = (a > 0.0 and b > 0.0) or not (a < b or flags)
            i = int(a * 10.0) + np.int32(b * 10.0)
            f = float(i) / 3.0 + to_dt(bool(a > b))
            g = np.float32(a) * 1.0 + np.float64(b)
    return logic_cast


@pytest.mark.parametrize("dt", FLOATS)
def test_logic_operators_and_casts(rng, dt):
    a, b = rng.uniform(-5, 5, SHAPE).astype(dt), rng.uniform(-5, 5, SHAPE).astype(dt)
    flags = rng.integers(0, 2, SHAPE).astype(bool)
    defn = logic_cast_defn(dt)
    ef = ((a > 0) & (b > 0)) | ~((a < b) | flags)
    ei = ((a * dt(10)).astype(np.int64) + (b * dt(10)).astype(np.int32)).astype(np.int32)
    eF = (ei.astype(np.float64) / 3.0 + (a > b).astype(dt)).astype(dt)
    eg = a.astype(np.float32).astype(np.float64) + b.astype(np.float64)
    arrays = {"a": a, "b": b, "flags": flags, "i": np.zeros(SHAPE, np.int32),
              "f": np.zeros(SHAPE, dt), "g": np.zeros(SHAPE)}
    check_construct(defn, arrays, {"flags": ef, "i": ei, "f": eF, "g": eg},
                    ["flags", "i", "f", "g"])


# ------------------------------------------------------------------------------ builtins

UNARY = ["abs", "sqrt", "exp", "log", "log10", "floor", "ceil", "trunc", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh"]
EXACT = {"abs", "sqrt", "floor", "ceil", "trunc"}  # correctly rounded: bitwise equal


def builtins_defn(dt):
    def builtins(a: Field[dt], b: Field[dt], u: Field[(dt, (17,))], mn: Field[dt],
                 mx: Field[dt], pw: Field[dt], at2: Field[dt], fin: Field[np.bool_],
                 inf: Field[np.bool_], nan: Field[np.bool_]):
        with computation(PARALLEL), interval(...):
            u[0, 0, 0][0] = abs(a)
            u[0, 0, 0][1] = sqrt(a)
            u[0, 0, 0][2] = exp(a)
            u[0, 0, 0][3] = log(a)
            u[0, 0, 0][4] = log10(a)
            u[0, 0, 0][5] = floor(a)
            u[0, 0, 0][6] = ceil(a)
            u[0, 0, 0][7] = trunc(a)
            u[0, 0, 0][8] = sin(a)
            u[0, 0, 0][9] = cos(a)
            u[0, 0, 0][10] = tan(a)
            u[0, 0, 0][11] = arcsin(a)
            u[0, 0, 0][12] = arccos(a)
            u[0, 0, 0][13] = arctan(a)
            u[0, 0, 0][14] = sinh(a)
            u[0, 0, 0][15] = cosh(a)
            u[0, 0, 0][16] = tanh(a)
            mn = min(a, b)
            mx = max(a, b)
            pw = pow(a, b)
            at2 = arctan2(a, b)
            fin = isfinite(a)
            inf = isinf(a)
            nan = isnan(a)
    return builtins


@pytest.mark.parametrize("dt", FLOATS)
def test_every_builtin_matches_numpy(rng, dt):
    defn = builtins_defn(dt)  # abs, min, max, pow: Python's names mean the builtins
    a = special_values(rng, dt) / dt(4)
    b = special_values(rng, dt)
    with np.errstate(all="ignore"):
        u = np.stack([getattr(np, {"abs": "abs"}.get(n, n))(a) for n in UNARY], axis=-1)
        expected = {"u": u, "mn": np.minimum(a, b), "mx": np.maximum(a, b),
                    "pw": np.power(a, b), "at2": np.arctan2(a, b), "fin": np.isfinite(a),
                    "inf": np.isinf(a), "nan": np.isnan(a)}
    assert np.isnan(expected["mn"]).any() and np.isinf(a).any()
    arrays = {"a": a, "b": b, **{n: np.zeros_like(v) for n, v in expected.items()}}
    results = check_construct(defn, arrays, expected, list(expected), bitwise=False)
    for (backend, layout), res in results.items():
        for n in ("mn", "mx", "fin", "inf", "nan"):
            assert_same_bits(res[n], expected[n], f"{n} ({backend}, {layout})")
        for index, n in enumerate(UNARY):
            if n in EXACT:
                assert_same_bits(res["u"][..., index], u[..., index], f"{n} ({backend})")


def int_builtins_defn():
    def int_builtins(i: Field[np.int32], j: Field[np.int64], o: Field[np.int32],
                     p: Field[np.int64], f: Field[np.float64], fin: Field[np.bool_]):
        with computation(PARALLEL), interval(...):
            o = abs(i) + floor(i) - ceil(i) + trunc(i)  # NumPy 2 keeps integers integers
            p = min(i, j) * 2 - max(j, i)
            f = sqrt(i) + pow(j, 2)
            fin = isfinite(i) and not isnan(j)
    return int_builtins


def test_builtins_on_integers(rng):
    defn = int_builtins_defn()
    i = rng.integers(-100, 100, SHAPE).astype(np.int32)
    j = rng.integers(-100, 100, SHAPE).astype(np.int64)
    with np.errstate(all="ignore"):
        assert np.floor(i).dtype == np.int32
        expected = {
            "o": (np.abs(i) + np.floor(i) - np.ceil(i) + np.trunc(i)).astype(np.int32),
            "p": np.minimum(i, j) * 2 - np.maximum(j, i),
            "f": np.sqrt(i) + np.power(j, 2).astype(np.float64),
            "fin": np.isfinite(i) & ~np.isnan(j),
        }
    arrays = {"i": i, "j": j, **{n: np.zeros_like(v) for n, v in expected.items()}}
    check_construct(defn, arrays, expected, list(expected))


def gt4py_spellings_defn(dt):
    def gt4py_spellings(a: Field[dt], b: Field[dt], m: Field[dt], t: Field[dt]):
        with computation(PARALLEL), interval(...):
            m = mod(a, b)  # noqa: F821  (GT4Py's builtin: NumPy's np.mod)
            t = asin(a * 0.5) + acos(a * 0.5) + atan(b)  # noqa: F821  (GT4Py's names)
    return gt4py_spellings


@pytest.mark.parametrize("dt", FLOATS)
def test_gt4py_builtin_spellings(rng, dt):
    a, b = rng.uniform(-1, 1, SHAPE).astype(dt), rng.uniform(-3, 3, SHAPE).astype(dt)
    expected = {"m": np.mod(a, b),
                "t": np.arcsin(a * dt(0.5)) + np.arccos(a * dt(0.5)) + np.arctan(b)}
    check_construct(gt4py_spellings_defn(dt), {"a": a, "b": b, "m": np.zeros(SHAPE, dt),
                                               "t": np.zeros(SHAPE, dt)},
                    expected, ["m", "t"], bitwise=False)


def special_casts_defn(dt):
    def special_casts(a: Field[dt], i: Field[np.int32], j: Field[np.int64], b: Field[np.bool_]):
        with computation(PARALLEL), interval(...):
            i = np.int32(a)
            j = int(a)
            b = bool(a)
    return special_casts


@pytest.mark.parametrize("dt", FLOATS)
def test_casts_of_special_values_match_numpy(dt):
    values = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.7, -2.7, -0.0, 0.5,
                       2.0**63, -2.0**63, 2.0**31, -2.0**31 - 1, 2.0**31 - 128], dtype=dt)
    a = values.reshape(4, 4, 1)
    with np.errstate(invalid="ignore"):
        expected = {"i": a.astype(np.int32), "j": a.astype(np.int64), "b": a.astype(bool)}
    arrays = {"a": a, **{n: np.zeros_like(v) for n, v in expected.items()}}
    check_construct(special_casts_defn(dt), arrays, expected, list(expected))
