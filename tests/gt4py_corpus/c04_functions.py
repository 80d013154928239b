"""@gtscript.function: offsets, nesting, tuple returns, defaults, keywords, captured globals."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval

from gt4py_corpus.case import Case

CASES = []

SCALE = 1.0


@gtscript.function
def centred_difference(f):
    return 0.5 * (f[1, 0, 0] - f[-1, 0, 0])


@gtscript.function
def laplacian(f):
    return f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0] - 4.0 * f


@gtscript.function
def gradients(f):
    return f[1, 0, 0] - f, f[0, 1, 0] - f


@gtscript.function
def divergence(f, scale):
    fx, fy = gradients(f)
    return scale * (fx - fx[-1, 0, 0] + fy - fy[0, -1, 0])


@gtscript.function
def blend(a, b, weight=0.25):
    return weight * a + (1.0 - weight) * b


@gtscript.function
def clamp(x, low, high):
    return min(max(x, low), high)


@gtscript.function
def scaled(f):
    return SCALE * f


SCALE = 3.0  # GT4Py captures a function's globals when it is decorated: scaled() keeps 1.0


@gtscript.function
def sign_of(x):
    return 1.0 if x > 0.0 else -1.0


@gtscript.function
def upwind(f, velocity):
    return velocity * (f - f[-1, 0, 0]) if velocity > 0.0 else velocity * (f[1, 0, 0] - f)


@gtscript.function
def with_temporaries(f):
    d = f[0, 1, 0] - f[0, -1, 0]
    e = d * d
    return e + f


@gtscript.function
def vertical_mean(f):
    return 0.5 * (f[0, 0, 1] + f)


def call_function(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = centred_difference(a)


CASES.append(Case(call_function))


def function_of_function_result(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap = laplacian(a)
        out = laplacian(lap)


CASES.append(Case(function_of_function_result))


def tuple_return(a: Field[np.float64], gx: Field[np.float64], gy: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        gx, gy = gradients(a)


CASES.append(Case(tuple_return))


def nested_functions(a: Field[np.float64], out: Field[np.float64], s: float):
    with computation(PARALLEL), interval(...):
        out = divergence(a, s)


CASES.append(Case(nested_functions, scalars={"s": 0.5}))


def default_argument(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = blend(a, b)


CASES.append(Case(default_argument))


def keyword_argument(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = blend(a, b, weight=0.75)


CASES.append(Case(keyword_argument))


def expression_argument(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = clamp(a + b, -0.5, 0.5)


CASES.append(Case(expression_argument))


def function_with_ternary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = sign_of(a) * a


CASES.append(Case(function_with_ternary))


def function_with_scalar(a: Field[np.float64], out: Field[np.float64], u: float):
    with computation(PARALLEL), interval(...):
        out = upwind(a, u)


CASES.append(Case(function_with_scalar, scalars={"u": -0.3}))


def function_temporaries(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = with_temporaries(a)


CASES.append(Case(function_temporaries))


def function_in_forward(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = blend(out[0, 0, -1], a)


CASES.append(Case(function_in_forward))


def function_vertical(a: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD), interval(0, -1):
        out = vertical_mean(a)


CASES.append(Case(function_vertical))


def function_of_temporary_at_offset(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a * a
        out = centred_difference(t)


CASES.append(Case(function_of_temporary_at_offset))


def function_global_capture(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = scaled(a)


CASES.append(Case(function_global_capture, needs="@gtscript.function captures its globals when decorated"))


def function_in_condition(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        slope = centred_difference(a)
        if slope > 0.0:
            out = a
        else:
            out = clamp(a, 0.0, 0.1)


CASES.append(Case(function_in_condition))


def function_called_twice(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = centred_difference(a) * centred_difference(b)


CASES.append(Case(function_called_twice))


def function_and_builtin(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = laplacian(a) + abs(a)


CASES.append(Case(function_and_builtin))


def undecorated_helper(x):
    return x + 1.0


def calls_plain_python(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = undecorated_helper(a)


CASES.append(Case(calls_plain_python, expect="reject"))


def wrong_argument_count(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = clamp(a, 0.0)


CASES.append(Case(wrong_argument_count, expect="reject"))
