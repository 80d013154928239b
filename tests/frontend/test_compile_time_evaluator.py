"""Compile-time expressions are evaluated by gtscript's own evaluator, never by ``eval``:
building a definition runs no code its text spells (calls of other functions, ``__import__``,
dunder attributes, operators of user objects), and what the language allows (constants,
externals, arithmetic, axis indices, the documented builtins) still builds and computes the
same thing on cpu and numpy as hand-written NumPy."""

import inspect
import types

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, I, J, K, __INLINED, compile_assert, computation, interval
from gtscript import horizontal, region
from gtscript.errors import GTScriptSyntaxError

CALLS = []


def _record(*args):
    """A global function a hostile definition tries to call at build time."""
    CALLS.append(args)
    return 0


class _Sneaky:
    """An external whose operators record that they ran."""

    def __add__(self, other):
        CALLS.append("add")
        return 0

    __radd__ = __add__

    def __bool__(self):
        CALLS.append("bool")
        return True

    def __eq__(self, other):
        CALLS.append("eq")
        return True

    __hash__ = object.__hash__


SNEAKY = _Sneaky()


@pytest.fixture(autouse=True)
def _no_calls():
    CALLS.clear()
    yield
    assert CALLS == [], "building ran code from the definition's text"


def _line_of(defn, text):
    lines, first = inspect.getsourcelines(defn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _refused(defn, text, match, **options):
    with pytest.raises(GTScriptSyntaxError, match=match) as info:
        gtscript.stencil(backend="numpy", definition=defn, rebuild=True, **options)
    assert info.value.lineno == _line_of(defn, text), str(info.value)
    return info.value


def test_import_in_an_interval_bound_is_refused_not_run():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(__import__("os").getpid() * 0, None):
            out = a

    _refused(defn, "__import__", "__import__")


def test_calls_of_other_functions_are_refused_everywhere():
    def bound(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(_record(), None):
            out = a

    def offset(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a[_record(), 0, 0]

    def data_index(a: Field[np.float64, (3,)], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a[0, 0, 0][_record()]

    def region_bound(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a
            with horizontal(region[I[0] + _record(), :]):
                out = 2.0 * a

    def inlined(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            if __INLINED(_record()):
                out = a

    def asserted(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            compile_assert(_record())
            out = a

    def annotation(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            tmp: _record() = a
            out = tmp

    for defn in (bound, offset, region_bound, inlined, asserted):
        _refused(defn, "_record()", "cannot be called at compile time")
    # a data index may be known only at run time: there the call is refused as a call of a
    # function that is not a gtscript function, still without running it
    _refused(data_index, "_record()", "not a gtscript function")
    _refused(annotation, "_record()", "cannot be called at compile time")


def test_dunders_lambdas_and_comprehensions_are_refused():
    def dunder(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import PHYS

        with computation(PARALLEL), interval(...):
            if __INLINED(PHYS.__class__.__name__ == "x"):
                out = a

    def lam(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval((lambda: 0)(), None):
            out = a

    def comp(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            compile_assert([n for n in (1, 2)])
            out = a

    def builtin_name(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            compile_assert(getattr(a, "x"))
            out = a

    phys = types.SimpleNamespace(G=9.81)
    _refused(dunder, "__class__", "__class__", externals={"PHYS": phys})
    _refused(lam, "lambda", "Lambda")
    _refused(comp, "compile_assert", "ListComp")
    _refused(builtin_name, "getattr", "getattr|field, parameter or temporary")


def test_user_operators_and_arrays_do_not_run_at_build_time():
    def add(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import OBJ

        with computation(PARALLEL), interval(OBJ + 0, None):
            out = a

    def truth(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import OBJ

        with computation(PARALLEL), interval(...):
            if __INLINED(OBJ):
                out = a

    def equal(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import OBJ

        with computation(PARALLEL), interval(...):
            compile_assert(OBJ == 1)
            out = a

    _refused(add, "OBJ + 0", "not to values of type", externals={"OBJ": SNEAKY})
    _refused(truth, "__INLINED(OBJ)", "compile-time condition", externals={"OBJ": SNEAKY})
    _refused(equal, "OBJ == 1", "not to values of type", externals={"OBJ": SNEAKY})


def test_an_array_external_in_inlined_is_a_located_syntax_error():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import FLAGS

        with computation(PARALLEL), interval(...):
            if __INLINED(FLAGS):
                out = a

    def compared(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import FLAGS

        with computation(PARALLEL), interval(...):
            if __INLINED(FLAGS > 0):
                out = a

    error = _refused(defn, "__INLINED(FLAGS)", "ndarray", externals={"FLAGS": np.ones(3)})
    assert "truth value" not in str(error)
    _refused(compared, "FLAGS > 0", "ndarray", externals={"FLAGS": np.ones(3)})


def test_huge_constants_are_refused_quickly():
    def power(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = a[0, 0, 0 * 2 ** 10 ** 10]

    def shift(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(0, 1 << 100000):
            out = a

    _refused(power, "2 ** 10 ** 10", "too large")
    _refused(shift, "1 << 100000", "too large")


def test_division_by_zero_is_a_located_error():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(1 // 0, None):
            out = a

    _refused(defn, "1 // 0", "ZeroDivisionError")


SHAPE = (6, 5, 4)


def _allowed_defn():
    def allowed(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import CFG, HALO, MODE, OFFSETS

        with computation(PARALLEL), interval(K[0] + min(HALO, 1), K[-1] + 0 * abs(-3)):
            compile_assert(len(OFFSETS) == 2 and MODE in ("fast", "slow") and CFG.n >= 1)
            compile_assert(not (MODE is None) and int(2.7) == 2 and round(2.4) == 2)
            compile_assert(bool(HALO) and float(HALO) == 1.0 and max(1, 2, 3) == 3)
            out = a[OFFSETS[0] if MODE == "fast" else -1, -OFFSETS[1] + (HALO << 1) - 2, 0]
        with computation(PARALLEL), interval(0, 1):
            if __INLINED(MODE == "fast" and CFG.n ** 2 == 4):
                out = 2.0 * a
            else:
                out = -a

    return allowed


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_what_the_language_allows_still_builds_and_computes(backend):
    externals = {
        "CFG": types.SimpleNamespace(n=2),
        "HALO": 1,
        "MODE": "fast",
        "OFFSETS": (1, 1),
    }
    stencil = gtscript.stencil(backend=backend, definition=_allowed_defn(), externals=externals)
    rng = np.random.default_rng(7)
    a = rng.random(SHAPE)
    out = np.full(SHAPE, -99.0)
    stencil(a, out, origin=(0, 1, 0), domain=(5, 4, 4))
    expected = np.full(SHAPE, -99.0)
    expected[0:5, 1:5, 1:3] = a[1:6, 0:4, 1:3]  # a[1, -1, 0] in interval(1, -1)
    expected[0:5, 1:5, 0] = 2.0 * a[0:5, 1:5, 0]
    np.testing.assert_array_equal(out, expected)


def test_a_failing_builtin_is_a_located_error():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            compile_assert(int("x"))
            out = a

    _refused(defn, 'int("x")', "ValueError")


def test_region_bounds_with_axis_arithmetic_build():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import W

        with computation(PARALLEL), interval(...):
            out = a
            with horizontal(region[I[0] : I[0] + W, J[-1] - (W - 1) :]):
                out = -a

    results = []
    for backend in ("cpu", "numpy"):
        stencil = gtscript.stencil(backend=backend, definition=defn, externals={"W": 2})
        a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
        out = np.zeros(SHAPE)
        stencil(a, out)
        results.append(out)
    expected = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    expected[0:2, 3:5] *= -1  # I[0] .. I[0] + 2, J[-1] - 1 .. the end
    np.testing.assert_array_equal(results[0], expected)
    np.testing.assert_array_equal(results[1], expected)


def test_qualified_inlined_is_the_identity_inside_a_compile_time_expression():
    def defn(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import N

        with computation(PARALLEL), interval(0, gtscript.__INLINED(N) + 1):
            out = a

    stencil = gtscript.stencil(backend="numpy", definition=defn, externals={"N": 1})
    a = np.ones(SHAPE)
    out = np.zeros(SHAPE)
    stencil(a, out)
    expected = np.zeros(SHAPE)
    expected[:, :, :2] = 1.0
    np.testing.assert_array_equal(out, expected)


def test_string_annotations_are_evaluated_without_eval():
    def hostile(a: "Field[_record()]", out: "Field[np.float64]"):  # noqa: F821
        with computation(PARALLEL), interval(...):
            out = a

    with pytest.raises(GTScriptSyntaxError, match="cannot be called at compile time"):
        gtscript.stencil(backend="numpy", definition=hostile, rebuild=True)

    def fine(a: "Field[np.float64]", out: "Field[gtscript.IJK, (np.float64, (2,))]", s: "float"):
        with computation(PARALLEL), interval(...):
            out[0, 0, 0][1] = a * s

    for backend in ("cpu", "numpy"):
        stencil = gtscript.stencil(backend=backend, definition=fine)
        a = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
        out = np.zeros((*SHAPE, 2))
        stencil(a, out, s=2.0)
        expected = np.zeros((*SHAPE, 2))
        expected[..., 1] = 2.0 * a
        np.testing.assert_array_equal(out, expected)
