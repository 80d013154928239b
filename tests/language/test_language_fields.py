"""Field kinds and dtypes: IJ and K fields, data dimensions, int/bool fields, NumPy 2 type
promotion (a Python literal does not widen a float32 or int32 expression), the
`literal_float_precision` build option, annotated temporaries and augmented assignment."""

import numpy as np
import pytest

from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, K, computation, interval
from language_helpers import FLOATS, check_construct, run

SHAPE = (6, 5, 4)
NI, NJ, NK = SHAPE


def rand(rng, dt, shape=SHAPE, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dt)


# ------------------------------------------------------------------------------ IJ and K


def lower_dim_defn(dt):
    def lower_dim(a: Field[dt], s2: Field[IJ, dt], s1: Field[K, dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = a * s1 + s2[1, 0] - s2[0, -1, 0] + s1[0, 0, 1] - s1[-1]
    return lower_dim


@pytest.mark.parametrize("dt", FLOATS)
def test_ij_and_k_fields(rng, dt):
    a, s2, s1 = rand(rng, dt), rand(rng, dt, (NI, NJ)), rand(rng, dt, (NK,))
    out = np.zeros(SHAPE, dt)
    origin, domain = {"_all_": (0, 1, 1), "s2": (0, 1), "s1": (1,)}, (NI - 1, NJ - 1, NK - 2)
    e = out.copy()
    A = a[0:NI - 1, 1:NJ, 1:NK - 1]
    S2 = (s2[1:NI, 1:NJ] - s2[0:NI - 1, 0:NJ - 1])[:, :, None]
    S1 = s1[None, None, :]
    e[0:NI - 1, 1:NJ, 1:NK - 1] = A * S1[..., 1:NK - 1] + S2 + S1[..., 2:NK] - S1[..., 0:NK - 2]
    check_construct(lower_dim_defn(dt), {"a": a, "s2": s2, "s1": s1, "out": out}, {"out": e},
                    ["out"], origin=origin, domain=domain)


def column_sum_defn(dt):
    def column_sum(a: Field[dt], total: Field[IJ, dt], top: Field[IJ, dt]):
        with computation(FORWARD):
            with interval(0, 1):
                total = a
            with interval(1, None):
                total = total + a
        with computation(BACKWARD), interval(-1, None):
            top = a * 2.0
    return column_sum


@pytest.mark.parametrize("dt", FLOATS)
def test_writing_ij_fields_in_sequential_computations(rng, dt):
    a = rand(rng, dt)
    total, top = np.zeros((NI, NJ), dt), np.zeros((NI, NJ), dt)
    e = a[:, :, 0].copy()
    for k in range(1, NK):
        e = e + a[:, :, k]
    check_construct(column_sum_defn(dt), {"a": a, "total": total, "top": top},
                    {"total": e, "top": a[:, :, -1] * dt(2)}, ["total", "top"])


# ------------------------------------------------------------------------ data dimensions


def data_dims_defn(dt):
    def data_dims(v: Field[(dt, (3,))], m: Field[IJ, (dt, (2, 2))], w: Field[(dt, (2,))]):
        with computation(PARALLEL), interval(...):
            w[0, 0, 0][0] = v[0, 0, 0][0] * m[0, 0][0, 1] + v[1, 0, 0][2]
            w[0, 0, 0][1] = v[0, 0, 0][1] - m[0, 0][1, 0] + w[0, 0, 0][0]
    return data_dims


@pytest.mark.parametrize("dt", FLOATS)
def test_data_dimensions(rng, dt):
    v, m = rand(rng, dt, SHAPE + (3,)), rand(rng, dt, (NI, NJ, 2, 2))
    w = np.zeros(SHAPE + (2,), dt)
    e = w.copy()
    e[:-1, :, :, 0] = v[:-1, :, :, 0] * m[:-1, :, None, 0, 1] + v[1:, :, :, 2]
    e[:-1, :, :, 1] = v[:-1, :, :, 1] - m[:-1, :, None, 1, 0] + e[:-1, :, :, 0]
    check_construct(data_dims_defn(dt), {"v": v, "m": m, "w": w}, {"w": e}, ["w"])


# ------------------------------------------------------------------------ ints and bools


def int_bool_defn():
    def int_bool(i32: Field[np.int32], i64: Field[np.int64], b: Field[np.bool_],
                 o32: Field[np.int32], o64: Field[np.int64], ob: Field[np.bool_],
                 of: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            o32 = i32 * 4 - 7  # int32 arithmetic: wraps like NumPy int32
            o64 = i32 * 4 + i64  # int32 + int64 -> int64 (after the int32 product)
            ob = (b and i32 > 0) or not b
            of = i32 / 3 + (i64 if b else -i64)  # true division of ints is float64
    return int_bool


def test_int_and_bool_fields(rng):
    i32 = rng.integers(-2**31, 2**31, SHAPE).astype(np.int32)
    i64 = rng.integers(-2**40, 2**40, SHAPE).astype(np.int64)
    b = rng.integers(0, 2, SHAPE).astype(bool)
    arrays = {"i32": i32, "i64": i64, "b": b, "o32": np.zeros(SHAPE, np.int32),
              "o64": np.zeros(SHAPE, np.int64), "ob": np.zeros(SHAPE, bool),
              "of": np.zeros(SHAPE)}
    with np.errstate(over="ignore"):
        p = i32 * np.int32(4)
        expected = {
            "o32": p - np.int32(7),
            "o64": p.astype(np.int64) + i64,
            "ob": (b & (i32 > 0)) | ~b,
            "of": i32 / 3 + np.where(b, i64, -i64),
        }
    assert not np.array_equal(expected["o64"], i32.astype(np.int64) * 4 + i64)  # it wrapped
    check_construct(int_bool_defn(), arrays, expected, list(expected))


# ----------------------------------------------------------------------- type promotion


def promotion_defn():
    def promotion(a: Field[np.float32], i: Field[np.int32], o32: Field[np.float32],
                  o64: Field[np.float64], t64: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            o32 = a * 1.1 + 0.3  # a literal does not widen float32 (NEP 50)
            o64 = a + i  # float32 + int32 -> float64
            t = a * 1.7  # the temporary takes the expression's type
            t64 = t
    return promotion


@pytest.mark.parametrize("precision", [None, 64, 32])
def test_literal_promotion_and_literal_float_precision(rng, precision):
    a = rand(rng, np.float32, low=-100, high=100)
    i = rng.integers(-2**30, 2**30, SHAPE).astype(np.int32)
    arrays = {"a": a, "i": i, "o32": np.zeros(SHAPE, np.float32), "o64": np.zeros(SHAPE),
              "t64": np.zeros(SHAPE)}
    options = {} if precision is None else {"literal_float_precision": precision}
    if precision == 64:  # GT4Py's default: every literal is a float64
        o32 = (a.astype(np.float64) * 1.1 + 0.3).astype(np.float32)
        t = a.astype(np.float64) * 1.7
    elif precision == 32:  # literals are float32
        o32 = a * np.float32(1.1) + np.float32(0.3)
        t = (a * np.float32(1.7)).astype(np.float64)
    else:  # NumPy 2: a Python float meets float32 and stays float32
        o32 = a * 1.1 + 0.3
        t = (a * 1.7).astype(np.float64)
    assert o32.dtype == np.float32
    expected = {"o32": o32, "o64": a.astype(np.float64) + i, "t64": t}
    if precision == 64:
        assert not np.array_equal(o32, a * 1.1 + 0.3)  # the option makes a difference
    check_construct(promotion_defn(), arrays, expected, list(expected), **options)


def literal_temporary_defn():
    def literal_temporary(a: Field[np.float32], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            c = 0.1  # a temporary typed from a literal alone
            out = a + c
    return literal_temporary


@pytest.mark.parametrize("precision", [None, 64, 32])
def test_temporary_typed_from_a_literal(rng, precision):
    a = rand(rng, np.float32)
    options = {} if precision is None else {"literal_float_precision": precision}
    c = np.float32(0.1) if precision == 32 else np.float64(0.1)
    expected = (a + c).astype(np.float64)
    check_construct(literal_temporary_defn(), {"a": a, "out": np.zeros(SHAPE)},
                    {"out": expected}, ["out"], **options)


# ------------------------------------------------------ declarations and augmented assignment


def declared_defn(dt):
    def declared(a: Field[dt], out: Field[np.float64], n: Field[np.int64], f: Field[np.bool_]):
        with computation(PARALLEL), interval(...):
            t: np.float32 = 0
            t = a * 3.0  # stored as float32
            cnt: int = 7
            cnt += 1
            flag: bool = a > 0.0
            out = t
            n = cnt
            f = flag
    return declared


@pytest.mark.parametrize("dt", FLOATS)
def test_annotated_temporaries(rng, dt):
    a = rand(rng, dt)
    arrays = {"a": a, "out": np.zeros(SHAPE), "n": np.zeros(SHAPE, np.int64),
              "f": np.zeros(SHAPE, bool)}
    expected = {"out": (a * dt(3)).astype(np.float32).astype(np.float64),
                "n": np.full(SHAPE, 8, np.int64), "f": a > 0}
    check_construct(declared_defn(dt), arrays, expected, list(expected))


def augmented_defn(dt):
    def augmented(a: Field[dt], x: Field[dt], y: Field[dt], n: Field[np.int32]):
        with computation(PARALLEL), interval(...):
            x += a
            x -= 0.5
            x *= a
            x /= 4.0
            y **= 2
            y //= 0.3
            y %= a
            n += 3
            n *= -5
            n //= 4
            n %= 7
    return augmented


@pytest.mark.parametrize("dt", FLOATS)
def test_augmented_assignment(rng, dt):
    a, x, y = rand(rng, dt), rand(rng, dt), rand(rng, dt, low=-3, high=3)
    n = rng.integers(-100, 100, SHAPE).astype(np.int32)
    ex = (((x + a) - dt(0.5)) * a) / dt(4)
    ey = np.remainder(np.floor_divide(y ** 2, dt(0.3)), a)
    en = ((((n + 3) * -5) // 4) % 7).astype(np.int32)
    check_construct(augmented_defn(dt), {"a": a, "x": x, "y": y, "n": n},
                    {"x": ex, "y": ey, "n": en}, ["x", "y", "n"])


def test_scalar_dtypes(rng):
    def scalars(a: Field[np.float32], out: Field[np.float32], s32: np.float32, s64: float,
                k: np.int32, flag: bool):
        with computation(PARALLEL), interval(...):
            out = a * s32 + (s64 if flag else k)

    a = rand(rng, np.float32)
    for flag in (True, False):
        got = run(scalars, "cpu", {"a": a, "out": np.zeros(SHAPE, np.float32)},
                  {"s32": 1.5, "s64": 0.1, "k": 3, "flag": flag})["out"]
        ref = run(scalars, "numpy", {"a": a, "out": np.zeros(SHAPE, np.float32)},
                  {"s32": 1.5, "s64": 0.1, "k": 3, "flag": flag})["out"]
        other = np.float64(0.1) if flag else np.float64(3)
        expected = ((a * np.float32(1.5)).astype(np.float64) + other).astype(np.float32)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(ref, expected)


def test_lower_dimensional_writes_that_depend_on_the_order_are_build_errors():
    from gtscript.errors import GTScriptSemanticError

    from language_helpers import build

    def ij_parallel(a: Field[np.float64], c: Field[IJ, np.float64]):
        with computation(PARALLEL), interval(...):
            c = a

    def k_write(a: Field[np.float64], c: Field[K, np.float64]):
        with computation(FORWARD), interval(...):
            c = a

    def ij_single_level(a: Field[np.float64], c: Field[IJ, np.float64]):
        with computation(PARALLEL), interval(-1, None):
            c = a

    for defn, message in ((ij_parallel, "IJ field written in a PARALLEL"),
                          (k_write, "K field: it can only be read")):
        with pytest.raises(GTScriptSemanticError, match=message) as info:
            build(defn, "cpu")
        assert info.value.lineno == defn.__code__.co_firstlineno + 2
    a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    for backend in ("cpu", "numpy"):
        c = np.zeros((NI, NJ))
        build(ij_single_level, backend)(a, c)
        assert np.array_equal(c, a[:, :, -1])


def test_python_int_literals_out_of_int32_range():
    from gtscript.errors import GTScriptSemanticError

    from language_helpers import build

    def too_big(i: Field[np.int32], o: Field[np.int32]):
        with computation(PARALLEL), interval(...):
            o = i * 3000000000

    with pytest.raises(GTScriptSemanticError, match="does not fit in int32") as info:
        build(too_big, "cpu")
    assert info.value.lineno == too_big.__code__.co_firstlineno + 2

    def compare(i: Field[np.int32], b: Field[np.bool_], o: Field[np.int32]):
        with computation(PARALLEL), interval(...):
            b = i < 3000000000 and i > -3000000000  # exact, as NumPy 2 compares
            o = 7.9  # a float constant assigned to an int field truncates

    i = np.array([np.iinfo(np.int32).min, -1, 0, np.iinfo(np.int32).max], np.int32).reshape(2, 2, 1)
    for backend in ("cpu", "numpy"):
        b, o = np.zeros(i.shape, bool), np.zeros(i.shape, np.int32)
        build(compare, backend)(i, b, o)
        assert b.all() and (i < 3000000000).all()
        assert (o == 7).all()
