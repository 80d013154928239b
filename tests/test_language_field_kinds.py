"""Fields on one horizontal axis (``Field[I, ...]``, ``Field[J, ...]``) and on one horizontal
axis and K (``Field[IK, ...]``, ``Field[JK, ...]``), and the small integer dtypes (``int8``,
``int16``): every backend against hand-written NumPy."""

import numpy as np
import pytest

from gtscript import FORWARD, IK, JK, PARALLEL, Field, I, J, computation, interval
from gtscript.errors import GTScriptSemanticError
from test_language_helpers import FLOATS, build, check_construct

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
