"""Control flow: if/elif/else on scalar and field conditions, nested conditionals, ternary
expressions and `while` with a field condition, as gtscript-parallel-model reads them (a field
condition is evaluated into a mask first; a `while` iterates point by point until the
condition fails everywhere). Each construct runs on the cpu and numpy backends, on C, Fortran
and sliced inputs, in float64 and float32, against a hand-written NumPy reference."""

import numpy as np
import pytest

from gtscript import FORWARD, PARALLEL, Field, computation, interval
from language_helpers import FLOATS, check_construct

SHAPE = (7, 6, 5)


def rand(rng, dt, shape=SHAPE, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(dt)


# ------------------------------------------------------------------------------ scalar if


def scalar_if_defn(dt):
    def scalar_if(a: Field[dt], out: Field[dt], s: float, flag: bool):
        with computation(PARALLEL), interval(...):
            if s > 0.5:
                out = a + 1.0
            elif s > 0.0:
                out = a * 2.0
                if flag:
                    out = out - 3.0
            else:
                out = -a
    return scalar_if


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("s, flag", [(1.0, False), (0.25, False), (0.25, True), (-2.0, True)])
def test_if_elif_else_on_scalars(rng, dt, s, flag):
    a = rand(rng, dt)
    out = np.zeros(SHAPE, dt)
    if s > 0.5:
        expected = a + dt(1)
    elif s > 0.0:
        expected = a * dt(2) - (dt(3) if flag else dt(0))
    else:
        expected = -a
    check_construct(scalar_if_defn(dt), {"a": a, "out": out}, {"out": expected}, ["out"],
                    scalars={"s": s, "flag": flag})


# ------------------------------------------------------------------------------- field if


def field_if_defn(dt):
    def field_if(a: Field[dt], b: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            if a > 0.0:
                out = a
                a = -a  # changes the condition's field: the mask was taken before
            elif b > a:
                out = b
            else:
                out = 0.0
                a = 1.0
            b = a + out
    return field_if


@pytest.mark.parametrize("dt", FLOATS)
def test_if_elif_else_on_fields(rng, dt):
    a, b = rand(rng, dt), rand(rng, dt)
    out = np.full(SHAPE, 5, dt)
    # the seed's "NumPy notation": mask first, then every statement of each branch
    ea, eb, eo = a.copy(), b.copy(), out.copy()
    m1 = ea > 0
    eo = np.where(m1, ea, eo)
    ea = np.where(m1, -ea, ea)
    m2 = eb > ea
    eo = np.where(~m1 & m2, eb, eo)
    eo = np.where(~m1 & ~m2, dt(0), eo)
    ea = np.where(~m1 & ~m2, dt(1), ea)
    eb = ea + eo
    check_construct(field_if_defn(dt), {"a": a, "b": b, "out": out},
                    {"a": ea, "b": eb, "out": eo}, ["a", "b", "out"])


def nested_if_defn(dt):
    def nested_if(a: Field[dt], b: Field[dt], out: Field[dt], s: int):
        with computation(PARALLEL), interval(...):
            out = 0.0
            if a > 0.0:
                if s > 1:
                    if b > 0.5 or b < -0.5:
                        out = 1.0
                    else:
                        out = 2.0
                else:
                    out = 3.0
            else:
                if not b > a:
                    out = 4.0
                tmp = a[1, 0, 0] + a[-1, 0, 0]  # offset reads of a field no branch writes
                if tmp > 0.0 and b < 0.0:
                    out = out + 10.0
    return nested_if


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("s", [0, 2])
def test_nested_conditionals(rng, dt, s):
    shape = (9, 6, 4)
    a, b = rand(rng, dt, shape), rand(rng, dt, shape)
    out = np.full(shape, 9, dt)
    origin, domain = (1, 0, 0), (7, 6, 4)
    A, B = a[1:-1], b[1:-1]
    tmp = a[2:] + a[:-2]
    e = np.zeros(domain, dt)
    pos = A > 0
    if s > 1:
        e[pos] = np.where((B > 0.5) | (B < -0.5), dt(1), dt(2))[pos]
    else:
        e[pos] = 3
    e[~pos & ~(B > A)] = 4
    e[~pos & (tmp > 0) & (B < 0)] += 10
    expected = out.copy()
    expected[1:-1] = e
    check_construct(nested_if_defn(dt), {"a": a, "b": b, "out": out}, {"out": expected},
                    ["out"], scalars={"s": s}, origin=origin, domain=domain)


def ternary_defn(dt):
    def ternary(a: Field[dt], b: Field[dt], out: Field[dt]):
        with computation(PARALLEL), interval(...):
            out = a if a > b else (b - a if b > 0.5 else 2.0 * b)
    return ternary


@pytest.mark.parametrize("dt", FLOATS)
def test_ternary_expression(rng, dt):
    a, b = rand(rng, dt), rand(rng, dt)
    expected = np.where(a > b, a, np.where(b > 0.5, b - a, dt(2) * b))
    check_construct(ternary_defn(dt), {"a": a, "b": b, "out": np.zeros(SHAPE, dt)},
                    {"out": expected}, ["out"])


def condition_in_forward_defn(dt):
    def condition_in_forward(a: Field[dt], out: Field[dt]):
        with computation(FORWARD):
            with interval(0, 1):
                acc = a
                out = acc
            with interval(1, None):
                if a > 0.0:
                    acc = acc[0, 0, -1] + a
                else:
                    acc = acc[0, 0, -1] * 0.5
                out = acc
    return condition_in_forward


@pytest.mark.parametrize("dt", FLOATS)
def test_field_condition_in_forward_computation(rng, dt):
    a = rand(rng, dt)
    expected = np.empty_like(a)
    expected[:, :, 0] = a[:, :, 0]
    for k in range(1, SHAPE[2]):
        prev = expected[:, :, k - 1]
        expected[:, :, k] = np.where(a[:, :, k] > 0, prev + a[:, :, k], prev * dt(0.5))
    check_construct(condition_in_forward_defn(dt), {"a": a, "out": np.zeros(SHAPE, dt)},
                    {"out": expected}, ["out"])


# ---------------------------------------------------------------------------------- while


def while_defn(dt):
    def while_loop(a: Field[dt], b: Field[dt], c: Field[dt]):
        with computation(PARALLEL), interval(...):
            while a < b:
                c += 1.0
                a += 0.75
    return while_loop


@pytest.mark.parametrize("dt", FLOATS)
def test_while_with_field_condition(rng, dt):
    a, b = rand(rng, dt, low=-3, high=1), rand(rng, dt, low=-1, high=3)
    c = np.zeros(SHAPE, dt)
    ea, ec = a.copy(), c.copy()
    mask = ea < b  # the seed's model: the mask is updated after every pass of the body
    while mask.any():
        ec[mask] += dt(1)
        ea[mask] += dt(0.75)
        mask = ea < b
    assert ec.max() >= 3  # points iterate different numbers of times
    check_construct(while_defn(dt), {"a": a, "b": b, "c": c}, {"a": ea, "c": ec}, ["a", "c"])


def while_nested_defn(dt):
    def while_nested(a: Field[dt], n: Field[np.int32], out: Field[dt]):
        with computation(FORWARD), interval(...):
            count = 0
            x = a
            while x > 0.1:
                if count % 2 == 0:
                    x = x * 0.5
                else:
                    x = x - 0.05
                count += 1
            n = count
            out = x
    return while_nested


@pytest.mark.parametrize("dt", FLOATS)
def test_while_with_nested_field_conditional(rng, dt):
    a = rand(rng, dt, low=-1, high=4)
    n = np.full(SHAPE, -1, np.int32)
    out = np.zeros(SHAPE, dt)
    ex, en = a.copy(), np.zeros(SHAPE, np.int64)
    mask = ex > dt(0.1)
    while mask.any():
        even = (en % 2) == 0
        ex = np.where(mask & even, ex * dt(0.5), ex)
        ex = np.where(mask & ~even, ex - dt(0.05), ex)
        en = np.where(mask, en + 1, en)
        mask = ex > dt(0.1)
    check_construct(while_nested_defn(dt), {"a": a, "n": n, "out": out},
                    {"n": en.astype(np.int32), "out": ex}, ["n", "out"])
