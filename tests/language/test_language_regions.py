"""Horizontal regions: `with horizontal(region[...])` restricts statements to boxes of the IJ
plane given relative to the compute domain (I[0] is its first point, I[-1] its last), so that
boundary conditions can be written inside a stencil; a region of a temporary read later with
an offset reaches into the extended domain (I[0] - 1)."""

import numpy as np
import pytest

from gtscript import FORWARD, PARALLEL, Field, I, J, computation, horizontal, interval, region
from gtscript.errors import GTScriptSyntaxError
from language_helpers import FLOATS, build, check_construct

SHAPE = (9, 8, 4)


def rand(rng, dt, shape=SHAPE):
    return rng.uniform(-1, 1, size=shape).astype(dt)


def boundaries_defn(dt):
    def boundaries(a: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = a
            with horizontal(region[I[0], :]):
                out = 1.0
            with horizontal(region[I[-1], J[0]:J[2]]):
                out = 2.0
            with horizontal(region[:, J[-1]], region[I[1]:I[3], J[0]]):
                out = out + 10.0
            with horizontal(region[I[-2]:, J[1]:J[-1]]):
                if a > 0.0:
                    out = -a
    return boundaries


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("origin, domain", [((0, 0, 0), SHAPE), ((2, 1, 1), (5, 6, 3))])
def test_regions_relative_to_the_compute_domain(rng, dt, origin, domain):
    a = rand(rng, dt)
    out = np.full(SHAPE, 3, dt)
    (oi, oj, ok), (ni, nj, nk) = origin, domain
    A = a[oi:oi + ni, oj:oj + nj, ok:ok + nk]
    e = A.copy()
    e[0, :] = 1
    e[-1, 0:2] = 2
    e[:, -1] += 10
    e[1:3, 0] += 10
    sub = e[ni - 2:, 1:nj - 1]
    sub[...] = np.where(A[ni - 2:, 1:nj - 1] > 0, -A[ni - 2:, 1:nj - 1], sub)
    expected = out.copy()
    expected[oi:oi + ni, oj:oj + nj, ok:ok + nk] = e
    check_construct(boundaries_defn(dt), {"a": a, "out": out}, {"out": expected}, ["out"],
                    origin=origin, domain=domain)


def halo_region_defn(dt):
    def halo_region(a: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            t = a
            with horizontal(region[I[0] - 1, :], region[:, J[-1] + 1]):
                t = 0.0  # in the halo the later offset reads reach
            out = t[-1, 0, 0] + t[0, 1, 0]
    return halo_region


@pytest.mark.parametrize("dt", FLOATS)
def test_region_in_the_extended_domain_of_a_temporary(rng, dt):
    a = rand(rng, dt)
    out = np.zeros(SHAPE, dt)
    origin, domain = (1, 0, 0), (7, 7, 4)  # t needs i in [-1, 7), j in [0, 8)
    t = a[0:8, 0:8].copy()  # t at domain i = -1..6, j = 0..7
    t[0, :] = 0  # i == I[0] - 1
    t[:, 7] = 0  # j == J[-1] + 1
    e = t[0:7, 0:7] + t[1:8, 1:8]
    expected = out.copy()
    expected[1:8, 0:7] = e
    check_construct(halo_region_defn(dt), {"a": a, "out": out}, {"out": expected}, ["out"],
                    origin=origin, domain=domain)


def region_forward_defn(dt):
    def region_forward(a: Field[dt], out: Field[dt]):
        with computation(FORWARD):
            with interval(0, 1):
                out = a
            with interval(1, None):
                out = out[0, 0, -1] + a
                with horizontal(region[I[0]:I[2], :]):
                    out = 0.0
    return region_forward


@pytest.mark.parametrize("dt", FLOATS)
def test_region_in_forward_computation(rng, dt):
    a = rand(rng, dt)
    e = np.zeros(SHAPE, dt)
    e[:, :, 0] = a[:, :, 0]
    for k in range(1, SHAPE[2]):
        e[:, :, k] = e[:, :, k - 1] + a[:, :, k]
        e[0:2, :, k] = 0
    check_construct(region_forward_defn(dt), {"a": a, "out": np.zeros(SHAPE, dt)},
                    {"out": e}, ["out"])


def test_region_syntax_errors():
    def bad(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            with horizontal(region[I[0]]):
                out = a

    with pytest.raises(GTScriptSyntaxError, match="I and a J part") as info:
        build(bad, "cpu")
    assert info.value.lineno == bad.__code__.co_firstlineno + 2

    def bad_axis(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            with horizontal(region[J[0], :]):
                out = a

    with pytest.raises(GTScriptSyntaxError, match="axis I"):
        build(bad_axis, "cpu")


def test_region_inside_a_while_loop_is_rejected():
    from gtscript.errors import GTScriptSemanticError

    def bad(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            while a > 0.0:
                a = a - 1.0
                with horizontal(region[I[0], :]):
                    out = out + 1.0

    with pytest.raises(GTScriptSemanticError, match="inside a while loop") as info:
        build(bad, "cpu")
    assert info.value.lineno == bad.__code__.co_firstlineno + 4


def while_in_region_defn(dt):
    def while_in_region(a: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            with horizontal(region[I[0], :], region[:, J[-1]]):
                while a > 0.0:
                    a = a - 0.5
                    out = out + 1.0
    return while_in_region


@pytest.mark.parametrize("dt", FLOATS)
def test_while_inside_a_region(rng, dt):
    a = rand(rng, dt) * dt(3)
    out = np.zeros(SHAPE, dt)
    ea, eo = a.copy(), out.copy()
    inside = np.zeros(SHAPE, bool)
    inside[0, :] = inside[:, -1] = True
    mask = inside & (ea > 0)
    while mask.any():
        ea[mask] -= dt(0.5)
        eo[mask] += dt(1)
        mask = inside & (ea > 0)
    check_construct(while_in_region_defn(dt), {"a": a, "out": out}, {"a": ea, "out": eo},
                    ["a", "out"])
