"""Compile-time constructs, run end to end: externals (numbers, nested namespaces, gtscript
functions), `__INLINED`, `compile_assert` (a false assert is a build error at its line),
gtscript functions returning tuples and calling other functions; and Python outside the
language, which is a GTScriptSyntaxError at the offending line with a hint."""

import types

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, __INLINED, compile_assert, computation, interval
from gtscript.errors import GTScriptSemanticError, GTScriptSyntaxError
from language_helpers import FLOATS, build, check_construct

SHAPE = (7, 6, 3)


@gtscript.function
def grad_x(f):
    return f[1, 0, 0] - f[0, 0, 0]


@gtscript.function
def grad_y(f):
    return f[0, 1, 0] - f[0, 0, 0]


@gtscript.function
def gradients(f, scale=2.0):
    """A function returning a tuple, calling two other functions."""
    gx = grad_x(f) * scale
    return gx, grad_y(f) * scale


@gtscript.function
def norm2(f):
    gx, gy = gradients(f, 1.0)
    return gx * gx + gy * gy


@gtscript.function
def limiter(x):
    from __externals__ import phys

    return x if x < phys.bounds.upper else phys.bounds.upper


PHYS = types.SimpleNamespace(G=9.81, bounds=types.SimpleNamespace(upper=0.5))


def compile_time_defn(dt):
    def compile_time(a: Field[dt], gx: Field[dt], gy: Field[dt], n: Field[dt], lim: Field[dt]):
        from __externals__ import USE_NORM, phys, clip

        with computation(PARALLEL), interval(...):
            compile_assert(phys.G > 9.0)
            gx, gy = gradients(a)
            if __INLINED(USE_NORM):
                n = norm2(a) * phys.G
            else:
                n = -1.0
            lim = clip(a * 3.0)
    return compile_time


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("use_norm", [True, False])
def test_externals_functions_tuples_and_inlined(rng, dt, use_norm):
    a = rng.uniform(-1, 1, SHAPE).astype(dt)
    gx = (a[1:, :-1] - a[:-1, :-1]) * dt(2)
    gy = (a[:-1, 1:] - a[:-1, :-1]) * dt(2)
    g1x, g1y = gx / dt(2), gy / dt(2)
    norm = (g1x * g1x + g1y * g1y) * dt(9.81) if use_norm else np.full_like(gx, -1)
    a3 = a[:-1, :-1] * dt(3)
    lim = np.where(a3 < dt(0.5), a3, dt(0.5))
    outputs = {}
    for name, value in (("gx", gx), ("gy", gy), ("n", norm), ("lim", lim)):
        full = np.zeros(SHAPE, dt)
        full[:-1, :-1] = value
        outputs[name] = full
    arrays = {"a": a, **{name: np.zeros(SHAPE, dt) for name in outputs}}
    externals = {"USE_NORM": use_norm, "phys": PHYS, "clip": limiter}
    check_construct(compile_time_defn(dt), arrays, outputs, list(outputs), externals=externals)


def test_changing_a_nested_external_rebuilds(rng):
    a = rng.uniform(-1, 1, SHAPE)
    norms = []
    for g in (9.5, 19.0):
        phys = types.SimpleNamespace(G=g, bounds=types.SimpleNamespace(upper=0.5))
        st = build(compile_time_defn(np.float64), "cpu",
                   externals={"USE_NORM": True, "phys": phys, "clip": limiter})
        n = np.zeros(SHAPE)
        st(a, np.zeros(SHAPE), np.zeros(SHAPE), n, np.zeros(SHAPE))
        norms.append(n)
    np.testing.assert_allclose(norms[1], 2 * norms[0], rtol=1e-14)
    assert np.abs(norms[0]).max() > 0


def test_false_compile_assert_is_a_build_error_at_its_line():
    def asserting(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import N

        with computation(PARALLEL), interval(...):
            compile_assert(N < 3)
            out = a

    assert build(asserting, "cpu", externals={"N": 2}) is not None
    with pytest.raises(GTScriptSemanticError, match="compile_assert") as info:
        build(asserting, "cpu", externals={"N": 3})
    assert info.value.lineno == asserting.__code__.co_firstlineno + 4
    assert "compile_assert(N < 3)" in info.value.text


# ----------------------------------------------------------------- outside the language


def _for_loop(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        for i in range(3):
            out = a


def _lambda(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = (lambda x: x)(a)


def _attribute(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a.real  # `.T` is the transpose of a matrix field


def _python_call(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = np.linalg.norm(a)


def _slice(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[0:2, 0, 0]


def _try(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        try:
            out = a
        except ValueError:
            out = 0.0


def _nested_computation(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        with computation(PARALLEL), interval(...):
            out = a


def _bitwise(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a if (a > 0) & (a < 1) else 0.0


@pytest.mark.parametrize("defn, line, hint", [
    (_for_loop, 2, "`for` loops are not part of GTScript"),
    (_lambda, 2, "`lambda` is not part of GTScript"),
    (_attribute, 2, "attribute access"),
    (_python_call, 2, "unknown function.*can be called"),
    (_slice, 2, "slices are not part of GTScript"),
    (_try, 2, "`try` is not part of GTScript"),
    (_nested_computation, 2, "computations cannot be nested"),
    (_bitwise, 2, "operator is not part of GTScript"),
])
def test_python_outside_the_language_is_a_syntax_error(defn, line, hint):
    with pytest.raises(GTScriptSyntaxError, match=hint) as info:
        build(defn, "cpu")
    assert info.value.lineno == defn.__code__.co_firstlineno + line
    assert info.value.filename == __file__
