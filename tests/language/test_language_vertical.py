"""The vertical axis: off-centre K writes in FORWARD and BACKWARD computations (with the
visibility of the parallel-model seed's examples), and variable K offsets f[0, 0, kidx] with
kidx an int scalar, an int field or an int expression, including the call-time validation that
turns a read outside the array into a ValueError naming the field."""

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, computation, interval
from gtscript.errors import GTScriptSemanticError
from language_helpers import BACKENDS, FLOATS, LAYOUTS, build, check_construct

SHAPE = (5, 4, 9)
NI, NJ, NK = SHAPE


def rand(rng, dt, shape=SHAPE):
    return rng.uniform(-1, 1, size=shape).astype(dt)


# ----------------------------------------------------------------- off-centre K writes


def forward_offcentre_defn(dt):
    def forward_offcentre(a: Field[dt], b: Field[dt], c: Field[dt]):
        with computation(FORWARD), interval(...):
            a[0, 0, -1] = c
            b[0, 0, 1] = 2.0 * a  # sees the values a had before this computation
    return forward_offcentre


def backward_offcentre_defn(dt):
    def backward_offcentre(a: Field[dt], b: Field[dt], d: Field[dt]):
        with computation(BACKWARD), interval(...):
            a[0, 0, -1] = d
            b[0, 0, 1] = 2.0 * a  # sees d from the level above (except at the top level)
    return backward_offcentre


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("policy", ["FORWARD", "BACKWARD"])
def test_offcentre_k_writes(rng, dt, policy):
    a, b, c = rand(rng, dt), rand(rng, dt), rand(rng, dt)
    ea, eb = a.copy(), b.copy()
    # the domain leaves one level below and above for the shifted writes
    levels = range(1, NK - 1) if policy == "FORWARD" else range(NK - 2, 0, -1)
    for k in levels:
        ea[:, :, k - 1] = c[:, :, k]
        eb[:, :, k + 1] = 2 * ea[:, :, k]
    if policy == "FORWARD":
        assert np.array_equal(eb[:, :, 2:], 2 * a[:, :, 1:-1])  # unmodified values of a
        defn, third = forward_offcentre_defn(dt), "c"
    else:
        assert np.array_equal(eb[:, :, 2:-1], 2 * c[:, :, 2:-1])  # new values, but the top
        defn, third = backward_offcentre_defn(dt), "d"
    check_construct(defn, {"a": a, "b": b, third: c}, {"a": ea, "b": eb}, ["a", "b"],
                    origin=(0, 0, 1), domain=(NI, NJ, NK - 2))


def offcentre_conditional_defn(dt):
    def offcentre_conditional(x: Field[dt], a: Field[dt], b: Field[dt], c: Field[dt]):
        with computation(FORWARD), interval(...):
            if x < 0.0:
                a[0, 0, -1] = 1.0
            else:
                a[0, 0, 1] = 2.0  # visible in this computation, at the next level
            b = a
            c = a[0, 0, -1]
    return offcentre_conditional


@pytest.mark.parametrize("dt", FLOATS)
def test_offcentre_k_writes_in_conditional(rng, dt):
    x, a = rand(rng, dt), rand(rng, dt)
    b, c = np.zeros(SHAPE, dt), np.zeros(SHAPE, dt)
    ea, eb, ec = a.copy(), b.copy(), c.copy()
    for k in range(1, NK - 1):
        m = x[:, :, k] < 0
        ea[:, :, k - 1] = np.where(m, dt(1), ea[:, :, k - 1])
        ea[:, :, k + 1] = np.where(~m, dt(2), ea[:, :, k + 1])
        eb[:, :, k] = ea[:, :, k]
        ec[:, :, k] = ea[:, :, k - 1]
    check_construct(offcentre_conditional_defn(dt), {"x": x, "a": a, "b": b, "c": c},
                    {"a": ea, "b": eb, "c": ec}, ["a", "b", "c"],
                    origin=(0, 0, 1), domain=(NI, NJ, NK - 2))


def offcentre_temporary_defn(dt):
    def offcentre_temporary(a: Field[dt], out: Field[dt]):
        with computation(FORWARD):
            with interval(0, 1):
                t = a
                t[0, 0, 1] = a[0, 0, 1] * 0.5
            with interval(1, -1):
                t[0, 0, 1] = t + a[0, 0, 1]
        with computation(PARALLEL), interval(...):
            out = t
    return offcentre_temporary


@pytest.mark.parametrize("dt", FLOATS)
def test_offcentre_write_of_a_temporary(rng, dt):
    a = rand(rng, dt)
    t = np.zeros(SHAPE, dt)
    t[:, :, 0] = a[:, :, 0]
    t[:, :, 1] = a[:, :, 1] * dt(0.5)
    for k in range(1, NK - 1):
        t[:, :, k + 1] = t[:, :, k] + a[:, :, k + 1]
    check_construct(offcentre_temporary_defn(dt), {"a": a, "out": np.zeros(SHAPE, dt)},
                    {"out": t}, ["out"])


def test_offcentre_write_in_parallel_is_a_build_error():
    def bad(a: Field[np.float64], b: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            a[0, 0, 1] = b

    with pytest.raises(GTScriptSemanticError, match="PARALLEL") as info:
        build(bad, "cpu")
    assert info.value.lineno == bad.__code__.co_firstlineno + 2


# ----------------------------------------------------------------- variable K offsets


def vk_scalar_defn(dt):
    def vk_scalar(f: Field[dt], out: Field[dt], kk: int):
        with computation(PARALLEL), interval(...):
            out = f[0, 0, kk] + f[0, 0, kk - 1]
    return vk_scalar


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("kk", [1, 3])
def test_variable_k_offset_scalar(rng, dt, kk):
    f = rand(rng, dt)
    out = np.zeros(SHAPE, dt)
    nk = NK - 3  # levels 0..nk-1 read k + kk and k + kk - 1
    expected = out.copy()
    for k in range(nk):
        expected[:, :, k] = f[:, :, k + kk] + f[:, :, k + kk - 1]
    check_construct(vk_scalar_defn(dt), {"f": f, "out": out}, {"out": expected}, ["out"],
                    scalars={"kk": kk}, origin=(0, 0, 0), domain=(NI, NJ, nk))


def vk_field_defn(dt, it):
    def vk_field(f: Field[dt], idx: Field[it], idx2: Field[IJ, it], out: Field[dt]):
        with computation(FORWARD), interval(...):
            out = f[0, 0, idx] - 2.0 * f[1, 0, idx2 - 1]
    return vk_field


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("it", [np.int32, np.int64])
def test_variable_k_offset_int_fields(rng, dt, it):
    f = rand(rng, dt)
    out = np.zeros(SHAPE, dt)
    k = np.arange(NK)[None, None, :]
    idx = (rng.integers(0, NK, size=SHAPE) - k).astype(it)  # any level of the column
    idx2 = rng.integers(1, 3, size=(NI, NJ)).astype(it)
    expected = out.copy()
    ii, jj = np.meshgrid(np.arange(NI - 1), np.arange(NJ), indexing="ij")
    for kl in range(NK - 2):
        expected[:-1, :, kl] = (f[ii, jj, kl + idx[:-1, :, kl]]
                                - 2 * f[ii + 1, jj, kl + idx2[:-1, :] - 1])
    check_construct(vk_field_defn(dt, it), {"f": f, "idx": idx, "idx2": idx2, "out": out},
                    {"out": expected}, ["out"], origin=(0, 0, 0), domain=(NI - 1, NJ, NK - 2))


def vk_check_defn():
    def vk_check(f: Field[np.float64], idx: Field[np.int64], out: Field[np.float64], kk: int):
        with computation(PARALLEL), interval(...):
            out = f[0, 0, kk] + f[0, 0, idx]
    return vk_check


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_variable_k_offset_outside_the_array_is_caught(backend, layout, rng):
    from language_helpers import as_layout

    stencil = build(vk_check_defn(), backend)
    f = as_layout(rand(rng, np.float64), layout)
    out = as_layout(np.zeros(SHAPE), layout)
    idx = as_layout(np.zeros(SHAPE, np.int64), layout)
    stencil(f, idx, out, 0)  # in range
    assert np.array_equal(out, 2 * f)
    for kk in (NK, -1, 1):
        with pytest.raises(ValueError, match="'f'"):
            stencil(f, idx, out, kk)  # kk = 1 reads level NK at the top
    for k, value in ((NK - 1, 1), (0, -1), (3, NK)):
        bad = np.zeros(SHAPE, np.int64)
        bad[2, 1, k] = value
        with pytest.raises(ValueError, match="'f'.*'idx'|'idx'.*'f'"):
            stencil(f, as_layout(bad, layout), out, 0)
    # values outside the compute domain are not read, so they are not checked
    bad = np.zeros(SHAPE, np.int64)
    bad[0, 0, -1] = 100
    stencil(f, bad, out, 0, origin=(1, 0, 0), domain=(NI - 1, NJ, NK))
    stencil(f, bad, out, 0, origin=(0, 0, 0), domain=(NI, NJ, NK - 1))


def test_variable_k_offset_from_a_temporary_is_checked_while_running():
    # the offset is only known while the stencil runs: the kernel checks the level (see
    # tests/language/test_language_runtime.py) and the call undoes itself when it leaves the domain
    def shifted(f: Field[np.float64], s: Field[np.int64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            t = s - 1
            out = f[0, 0, t]

    f = np.arange(4.0)[None, None, :] * np.ones((2, 2, 1))
    for backend in ("cpu", "numpy"):
        stencil = build(shifted, backend)
        out = np.full((2, 2, 4), 9.0)
        stencil(f, np.ones((2, 2, 4), np.int64), out)
        assert (out == f).all()
        out[...] = 9.0
        with pytest.raises(ValueError, match=f"line {shifted.__code__.co_firstlineno + 3}, .*"
                                             f"outside the array's 4 levels"):
            stencil(f, np.zeros((2, 2, 4), np.int64), out)  # level -1 from the first level
        assert (out == 9.0).all()


def test_variable_k_offset_must_be_an_integer():
    def bad(f: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = f[0, 0, f]

    with pytest.raises(GTScriptSemanticError, match="integer"):
        build(bad, "cpu")


def axis_interval_defn(dt):
    from gtscript import K

    def axis_interval(a: Field[dt], out: Field[dt]):
        with computation(PARALLEL):
            with interval(K[0], K[0] + 2):
                out = a
            with interval(K[0] + 2, K[-1]):
                out = 2.0 * a
            with interval(K[-1], None):
                out = -a
    return axis_interval


@pytest.mark.parametrize("dt", FLOATS)
def test_interval_bounds_written_with_k(rng, dt):
    a = rand(rng, dt)
    e = np.concatenate([a[:, :, :2], 2 * a[:, :, 2:-1], -a[:, :, -1:]], axis=2)
    check_construct(axis_interval_defn(dt), {"a": a, "out": np.zeros(SHAPE, dt)}, {"out": e},
                    ["out"])


def vk_expression_defn():
    def vk_expression(f: Field[np.float64], g: Field[np.float32], idx: Field[np.int32],
                      j2: Field[IJ, np.int64], out: Field[np.float64], kk: int):
        with computation(BACKWARD), interval(...):
            out = f[0, 0, min(idx[1, 0, 0], kk) if g > 0.0 else int(g * 2.0)] + f[0, 0, idx[0, 0, j2]]
    return vk_expression


def test_variable_k_offset_expressions_and_their_validation(rng):
    shape = (5, 4, 8)
    nk = shape[2]
    f = rng.uniform(-1, 1, shape)
    g = rng.uniform(-1, 1, shape).astype(np.float32)
    idx = rng.integers(-2, 1, shape).astype(np.int32)  # levels below: inside from level 2 on
    j2 = rng.integers(-2, 1, (shape[0], shape[1])).astype(np.int64)
    kk = 1
    origin, domain = (0, 0, 2), (shape[0] - 1, shape[1], nk - 2)
    e = np.zeros(shape)
    for i in range(domain[0]):
        for j in range(domain[1]):
            for kl in range(2, nk):
                first = min(int(idx[i + 1, j, kl]), kk) if g[i, j, kl] > 0 else int(g[i, j, kl] * np.float32(2))
                e[i, j, kl] = f[i, j, kl + first] + f[i, j, kl + idx[i, j, kl + j2[i, j]]]
    arrays = {"f": f, "g": g, "idx": idx, "j2": j2, "out": np.zeros(shape)}
    check_construct(vk_expression_defn(), arrays, {"out": e}, ["out"], scalars={"kk": kk},
                    origin=origin, domain=domain)
    for backend in BACKENDS:
        stencil = build(vk_expression_defn(), backend)
        bad = j2.copy()
        bad[1, 2] = -2  # idx is read at array level 2 - 2 at the bottom: inside
        stencil(f, g, idx, bad, np.zeros(shape), kk, origin=origin, domain=domain)
        bad[1, 2] = -3
        with pytest.raises(ValueError, match="'idx'.*outside the array"):
            stencil(f, g, idx, bad, np.zeros(shape), kk, origin=origin, domain=domain)
        bad_g = g.copy()
        bad_g[3, 1, 4] = -2.0  # int(-4.0): level 2 + 2 - 4 = 0 of f is inside; -3 is not
        stencil(f, bad_g, idx, j2, np.zeros(shape), kk, origin=origin, domain=domain)
        bad_g[3, 1, 4] = -3.0
        with pytest.raises(ValueError, match="'f'.*computed from 'g', 'idx', 'kk'|'f'.*'g'"):
            stencil(f, bad_g, idx, j2, np.zeros(shape), kk, origin=origin, domain=domain)
