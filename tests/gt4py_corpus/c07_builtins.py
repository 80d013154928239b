"""The math builtins GT4Py and gtscript share, on float64, float32 and integer fields."""

import numpy as np

from gt4py.cartesian.gtscript import (
    PARALLEL,
    Field,
    abs,
    ceil,
    computation,
    cos,
    cosh,
    exp,
    floor,
    interval,
    isfinite,
    isinf,
    isnan,
    log,
    log10,
    max,
    min,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)

from gt4py_corpus.case import Case, with_specials

CASES = []


def builtin_abs(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = abs(a)


CASES.append(Case(builtin_abs))


def builtin_min_max(a: Field[np.float64], b: Field[np.float64], lo: Field[np.float64], hi: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lo = min(a, b)
        hi = max(a, b)


CASES.append(Case(builtin_min_max))


def builtin_min_max_int(a: Field[np.int64], b: Field[np.int64], out: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        out = max(a, b) - min(a, 0)


CASES.append(Case(builtin_min_max_int))


def builtin_abs_int(a: Field[np.int32], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        out = abs(a)


CASES.append(Case(builtin_abs_int))


def builtin_sqrt(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = sqrt(a)


CASES.append(Case(builtin_sqrt, positive=True))


def builtin_exp_log(a: Field[np.float64], e: Field[np.float64], l: Field[np.float64], l10: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        e = exp(a)
        l = log(a)
        l10 = log10(a)


CASES.append(Case(builtin_exp_log, positive=True))


def builtin_trig(a: Field[np.float64], s: Field[np.float64], c: Field[np.float64], t: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        s = sin(a)
        c = cos(a)
        t = tan(a)


CASES.append(Case(builtin_trig))


def builtin_hyperbolic(a: Field[np.float64], s: Field[np.float64], c: Field[np.float64], t: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        s = sinh(a)
        c = cosh(a)
        t = tanh(a)


CASES.append(Case(builtin_hyperbolic))


def builtin_rounding(a: Field[np.float64], f: Field[np.float64], c: Field[np.float64], t: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        f = floor(a * 3.0)
        c = ceil(a * 3.0)
        t = trunc(a * 3.0)


CASES.append(Case(builtin_rounding))


def builtin_classification(a: Field[np.float64], fin: Field[np.bool_], inf: Field[np.bool_], nan: Field[np.bool_]):
    with computation(PARALLEL), interval(...):
        fin = isfinite(a)
        inf = isinf(a)
        nan = isnan(a)


CASES.append(Case(builtin_classification, arrays={"a": with_specials}))


def builtin_nan_guard(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if isnan(a) or isinf(a):
            out = 0.0
        else:
            out = a


CASES.append(Case(builtin_nan_guard, arrays={"a": with_specials}))


def builtin_float32(a: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = sqrt(a) + exp(a) - log(a) + sin(a) * cos(a)


CASES.append(Case(builtin_float32, positive=True))


# (GT4Py 1.1 takes sqrt(n) of an int64 field in single precision; NumPy and gtscript in double:
# the explicit cast keeps the entry about what both mean.)
def builtin_sqrt_of_int(n: Field[np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = sqrt(float(n))


CASES.append(Case(builtin_sqrt_of_int, arrays={"n": lambda rng, s, dt: rng.integers(0, 50, s).astype(dt)}))


def builtin_composition(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = max(abs(a), min(sqrt(abs(b)), exp(-abs(a)))) + tanh(a * b)


CASES.append(Case(builtin_composition))


def builtin_exponent_of_field(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a ** b


CASES.append(Case(builtin_exponent_of_field, positive=True))


def builtin_nested_min(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = min(a, min(b, c)) + max(max(a, b), c)


CASES.append(Case(builtin_nested_min))

