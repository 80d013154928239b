"""Fields on one horizontal axis (``Field[I, ...]``, ``Field[J, ...]``) and on one horizontal
axis and K (``Field[IK, ...]``, ``Field[JK, ...]``), and the small integer dtypes (``int8``,
``int16``): every backend against hand-written NumPy."""

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import compiler, emulate
from gtscript import FORWARD, IK, JK, PARALLEL, Field, I, J, computation, interval
from gtscript.errors import GTScriptSemanticError
from language_helpers import FLOATS, assert_matches, build, check_construct

SHAPE = (6, 5, 4)
NI, NJ, NK = SHAPE


def rand(rng, dt, shape=SHAPE):
    return rng.uniform(-1.0, 1.0, size=shape).astype(dt)


# ----------------------------------------------------------------------- I, J, IK, JK fields


def one_axis_defn(dt):
    def one_axis(a: Field[dt], xi: Field[I, dt], yj: Field[J, dt], xk: Field[IK, dt],
                 yk: Field[JK, dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = a * xi[1] - yj[-1] + xk[0, 0] * yk[0, 1] + xk[-1, 0] + xi[0, 0, 0]
    return one_axis


@pytest.mark.parametrize("dt", FLOATS)
def test_fields_on_one_horizontal_axis(rng, dt):
    a, out = rand(rng, dt), np.zeros(SHAPE, dt)
    xi, yj = rand(rng, dt, (NI,)), rand(rng, dt, (NJ,))
    xk, yk = rand(rng, dt, (NI, NK)), rand(rng, dt, (NJ, NK))
    # domain: I in [1, NI - 1), J in [1, NJ), K in [0, NK - 1)
    origin = {"_all_": (1, 1, 0), "xi": (1,), "yj": (1,), "xk": (1, 0), "yk": (1, 0)}
    domain = (NI - 2, NJ - 1, NK - 1)
    i = np.arange(1, NI - 1)[:, None, None]
    j = np.arange(1, NJ)[None, :, None]
    k = np.arange(0, NK - 1)[None, None, :]
    e = out.copy()
    e[1:NI - 1, 1:NJ, 0:NK - 1] = (a[1:NI - 1, 1:NJ, 0:NK - 1] * xi[i + 1] - yj[j - 1]
                                   + xk[i, k] * yk[j, k + 1] + xk[i - 1, k] + xi[i])
    check_construct(one_axis_defn(dt), {"a": a, "xi": xi, "yj": yj, "xk": xk, "yk": yk,
                                        "out": out}, {"out": e}, ["out"],
                    origin=origin, domain=domain)


def sweep_with_ik_defn(dt):
    def sweep_with_ik(w: Field[IK, dt], c: Field[J, dt], acc: Field[dt]):
        with computation(FORWARD):
            with interval(0, 1):
                acc = w + c
            with interval(1, None):
                acc = acc[0, 0, -1] + w[0, 0] * c
    return sweep_with_ik


@pytest.mark.parametrize("dt", FLOATS)
def test_ik_and_j_fields_in_a_sweep(rng, dt):
    w, c = rand(rng, dt, (NI, NK)), rand(rng, dt, (NJ,))
    e = np.zeros(SHAPE, dt)
    e[:, :, 0] = w[:, None, 0] + c[None, :]
    for k in range(1, NK):
        e[:, :, k] = e[:, :, k - 1] + w[:, None, k] * c[None, :]
    check_construct(sweep_with_ik_defn(dt), {"w": w, "c": c, "acc": np.zeros(SHAPE, dt)},
                    {"acc": e}, ["acc"])


def test_one_axis_fields_take_arrays_of_their_own_rank(backend):
    stencil = build(one_axis_defn(np.float64), backend)
    a, out = np.zeros(SHAPE), np.zeros(SHAPE)
    good = {"xi": np.zeros(NI + 1), "yj": np.zeros(NJ), "xk": np.zeros((NI, NK)),
            "yk": np.zeros((NJ, NK))}
    for name, wrong in (("xi", np.zeros((NI + 1, NJ))), ("yk", np.zeros((NJ, NK, 2))),
                        ("yj", np.zeros(()))):
        out[...] = 3.0
        with pytest.raises(ValueError, match=f"'{name}'"):
            stencil(a=a, out=out, **{**good, name: wrong})
        assert (out == 3.0).all()


def test_offsets_along_missing_axes_and_writes_are_errors():
    def i_read_with_j_offset(xi: Field[I, np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = xi[0, 1, 0]

    def jk_read_with_i_offset(yk: Field[JK, np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = yk[1, 0, 0]

    def i_read_with_k_offset(xi: Field[I, np.float64], out: Field[np.float64]):
        with computation(FORWARD), interval(...):
            out = xi[0, 0, 1]

    def i_write(xi: Field[I, np.float64], a: Field[np.float64]):
        with computation(FORWARD), interval(...):
            xi = a

    def ik_write(xk: Field[IK, np.float64], a: Field[np.float64]):
        with computation(FORWARD), interval(0, 1):
            xk = a

    for defn, words in ((i_read_with_j_offset, ("an I field", "J offset")),
                        (jk_read_with_i_offset, ("a JK field", "I offset")),
                        (i_read_with_k_offset, ("an I field", "K offset")),
                        (i_write, ("an I field", "can only be read")),
                        (ik_write, ("an IK field", "can only be read"))):
        for backend in ("cpu", "numpy"):
            with pytest.raises(GTScriptSemanticError) as info:
                build(defn, backend)
            assert info.value.lineno == defn.__code__.co_firstlineno + 2
            for word in words:
                assert word in info.value.msg, (word, info.value.msg)


def test_field_annotation_axes():
    from gtscript import IJ, IJK, K, lang

    assert Field[I, np.float64].axes == "I" and Field[JK, float].axes == "JK"
    assert Field[IJK, float].axes == "IJK" and Field[IJ, float].axes == "IJ"
    assert Field[K, float].axes == "K" and Field[IK, np.float32].axes == "IK"
    with pytest.raises(lang.GTScriptDefinitionError, match="axes KI"):
        Field[(K, I), float]


# ------------------------------------------------------------------------------ int8, int16


def small_ints(a: Field[np.int8], b: Field[np.int16], f: Field[np.float32],
               o8: Field[np.int8], o16: Field[np.int16], of: Field[np.float32],
               o64: Field[np.float64], x: np.int8, y: np.int16):
    with computation(PARALLEL), interval(...):
        o8 = a * 3 + x - a // 7 + a % 5 - (-a)  # int8 arithmetic wraps at 8 bits
        o16 = a + b * b + np.int16(f * 1000.0) + y  # int8 + int16 -> int16
        of = a * f + b  # int8/int16 with float32 stays float32 (NumPy 2)
        o64 = a / b + np.int8(f * 300.0) + (a ** 2 if a > b else abs(a))


def test_int8_and_int16_fields_and_scalars(rng):
    shape = SHAPE
    a = rng.integers(-128, 128, shape).astype(np.int8)
    b = rng.integers(1, 300, shape).astype(np.int16)
    f = rng.uniform(-40.0, 40.0, shape).astype(np.float32)
    outs = {"o8": np.zeros(shape, np.int8), "o16": np.zeros(shape, np.int16),
            "of": np.zeros(shape, np.float32), "o64": np.zeros(shape)}
    x, y = np.int8(100), -30000
    with np.errstate(over="ignore"):
        e8 = a * np.int8(3) + x - a // np.int8(7) + a % np.int8(5) - (-a)
        e16 = a + b * b + (f.astype(np.float64) * 1000.0).astype(np.int16) + np.int16(y)
        ef = a * f + b
        # float -> int8 keeps the low bits of the int32 conversion (NumPy's astype)
        e64 = a / b + (f.astype(np.float64) * 300.0).astype(np.int8) + \
            np.where(a > b, a ** np.int8(2), np.abs(a))
    assert e8.dtype == np.int8 and e16.dtype == np.int16 and ef.dtype == np.float32
    assert not np.array_equal(e8.astype(np.int64), a.astype(np.int64) * 3 + 100 - a // 7
                              + a % 5 + a)  # the int8 arithmetic did wrap
    expected = {"o8": e8, "o16": e16, "of": ef, "o64": e64}
    check_construct(small_ints, {"a": a, "b": b, "f": f, **outs}, expected, list(outs),
                    scalars={"x": x, "y": y})
    # the cuda backend's source, run on the host emulation
    if compiler() is not None:
        arrays = {"a": a, "b": b, "f": f, **{k: v.copy() for k, v in outs.items()}}
        emulate(gtscript.stencil("cuda", small_ints))(**arrays, x=x, y=y)
        for name, value in expected.items():
            assert_matches(arrays[name], value, f"{name} (cuda emulation)")


def test_small_int_scalars_and_literals_are_range_checked(backend):
    stencil = build(small_ints, backend)
    arrays = {"a": np.zeros(SHAPE, np.int8), "b": np.ones(SHAPE, np.int16),
              "f": np.zeros(SHAPE, np.float32), "o8": np.full(SHAPE, 5, np.int8),
              "o16": np.zeros(SHAPE, np.int16), "of": np.zeros(SHAPE, np.float32),
              "o64": np.zeros(SHAPE)}
    for x, y, name in ((128, 0, "'x'"), (0, 40000, "'y'"), (-129, 0, "'x'")):
        with pytest.raises(ValueError, match=name):  # a call error: TypeError or ValueError
            stencil(**arrays, x=x, y=y)
        assert (arrays["o8"] == 5).all()
    with pytest.raises(TypeError, match="'a' has dtype int16"):  # arrays are never cast
        stencil(**{**arrays, "a": np.zeros(SHAPE, np.int16)}, x=0, y=0)

    def literal_too_big(a: Field[np.int8], o: Field[np.int8]):
        with computation(PARALLEL), interval(...):
            o = a + 300

    with pytest.raises(GTScriptSemanticError, match="does not fit in int8") as info:
        build(literal_too_big, backend)
    assert info.value.lineno == literal_too_big.__code__.co_firstlineno + 2
