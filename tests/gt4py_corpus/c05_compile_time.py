"""Externals, __INLINED, compile_assert and the GT4Py spellings of their imports."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, __INLINED, compile_assert, computation, interval

from gt4py_corpus.case import Case

CASES = []


@gtscript.function
def damped(f):
    from __externals__ import DAMPING

    return DAMPING * f


@gtscript.function
def double(f):
    return 2.0 * f


@gtscript.function
def triple(f):
    return 3.0 * f


def external_constant(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import FACTOR

    with computation(PARALLEL), interval(...):
        out = FACTOR * a


CASES.append(Case(external_constant, externals={"FACTOR": 2.5}))


def external_int_and_bool(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import N, FLIP

    with computation(PARALLEL), interval(...):
        out = a * N
        if FLIP:
            out = -out


CASES.append(Case(external_int_and_bool, externals={"N": 3, "FLIP": True}))


def external_in_function(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = damped(a)


CASES.append(Case(external_in_function, externals={"DAMPING": 0.125}))


def inlined_true(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import LIMIT

    with computation(PARALLEL), interval(...):
        out = a * 2.0
        if __INLINED(LIMIT):
            out = min(max(out, -0.5), 0.5)


CASES.append(Case(inlined_true, externals={"LIMIT": True}))


def inlined_false(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import LIMIT

    with computation(PARALLEL), interval(...):
        out = a * 2.0
        if __INLINED(LIMIT):
            out = min(max(out, -0.5), 0.5)


CASES.append(Case(inlined_false, externals={"LIMIT": False}))


def inlined_elif_chain(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import MODE

    with computation(PARALLEL), interval(...):
        if __INLINED(MODE == 0):
            out = a
        elif __INLINED(MODE == 1):
            out = a * a
        else:
            out = -a


CASES.append(Case(inlined_elif_chain, externals={"MODE": 1}))


def inlined_comparison(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import ORDER

    with computation(PARALLEL), interval(...):
        out = a
        if __INLINED(ORDER > 1 and ORDER < 4):
            out = a[1, 0, 0] + a[-1, 0, 0]


CASES.append(Case(inlined_comparison, externals={"ORDER": 2}))


def compile_assert_passes(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import NU

    with computation(PARALLEL), interval(...):
        compile_assert(NU < 0.25)
        out = a + NU * (a[1, 0, 0] - 2.0 * a + a[-1, 0, 0])


CASES.append(Case(compile_assert_passes, externals={"NU": 0.1}))


def compile_assert_fails(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import NU

    with computation(PARALLEL), interval(...):
        compile_assert(NU < 0.25)
        out = a * NU


CASES.append(Case(compile_assert_fails, expect="reject", externals={"NU": 0.5}))


def external_function(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import op

    with computation(PARALLEL), interval(...):
        out = op(a)


CASES.append(Case(external_function, externals=lambda m: {"op": m.triple}))


def external_function_choice(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import op

    with computation(PARALLEL), interval(...):
        out = op(a) + a


CASES.append(Case(external_function_choice, externals=lambda m: {"op": m.double}))


def external_offset_bound(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import TOP

    with computation(PARALLEL), interval(0, TOP):
        out = a


CASES.append(Case(external_offset_bound, externals={"TOP": 3}))


def external_inlined_field_choice(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    from __externals__ import USE_B

    with computation(PARALLEL), interval(...):
        if __INLINED(USE_B):
            out = b
        else:
            out = a


CASES.append(Case(external_inlined_field_choice, externals={"USE_B": False}))


def missing_external(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import NOT_GIVEN

    with computation(PARALLEL), interval(...):
        out = a * NOT_GIVEN


CASES.append(Case(missing_external, expect="reject"))


def gt4py_externals_import(a: Field[np.float64], out: Field[np.float64]):
    from gt4py.cartesian.__externals__ import FACTOR

    with computation(PARALLEL), interval(...):
        out = FACTOR * a


CASES.append(Case(gt4py_externals_import, externals={"FACTOR": 4.0},
                  needs="from gt4py.cartesian.__externals__ import inside definitions"))


def gtscript_module_import(a: Field[np.float64], out: Field[np.float64]):
    from gt4py.cartesian.__gtscript__ import PARALLEL, computation, interval

    with computation(PARALLEL), interval(...):
        out = a - 1.0


CASES.append(Case(gtscript_module_import, needs="from gt4py.cartesian.__gtscript__ import inside definitions"))


def plain_gtscript_import(a: Field[np.float64], out: Field[np.float64]):
    from __gtscript__ import PARALLEL, computation, interval

    with computation(PARALLEL), interval(...):
        out = a + 1.0


CASES.append(Case(plain_gtscript_import, needs="from __gtscript__ import inside definitions"))


def external_in_literal_expression(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import A, B

    with computation(PARALLEL), interval(...):
        out = (A + B) * a + A * B


CASES.append(Case(external_in_literal_expression, externals={"A": 0.5, "B": -2.0}))


def inlined_in_function_external(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import DAMPING

    with computation(PARALLEL), interval(...):
        out = damped(a) + DAMPING


CASES.append(Case(inlined_in_function_external, externals={"DAMPING": 0.5}))
