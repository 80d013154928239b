"""Names of GT4Py's gtscript module that a GT4Py user imports: the remaining math builtins,
casts, IK/JK, and module aliases. (Each import line fails on its own where a name is missing.)"""

import numpy as np

import gt4py.cartesian.gtscript as gs
from gt4py.cartesian.gtscript import PARALLEL, Field, I, K, computation, interval
from gt4py.cartesian.gtscript import asin, acos, atan
from gt4py.cartesian.gtscript import asinh, acosh, atanh
from gt4py.cartesian.gtscript import gamma, cbrt, erf, erfc
from gt4py.cartesian.gtscript import round, round_away_from_zero
from gt4py.cartesian.gtscript import mod
from gt4py.cartesian.gtscript import float32, float64, int32, int64
from gt4py.cartesian.gtscript import IK, JK

from gt4py_corpus.case import Case

CASES = []


def inverse_trig(a: Field[np.float64], s: Field[np.float64], c: Field[np.float64], t: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        s = asin(a)
        c = acos(a)
        t = atan(a)


CASES.append(Case(inverse_trig, needs="asin/acos/atan"))


def inverse_hyperbolic(a: Field[np.float64], s: Field[np.float64], c: Field[np.float64], t: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        s = asinh(a)
        c = acosh(a + 2.0)
        t = atanh(a * 0.9)


CASES.append(Case(inverse_hyperbolic, needs="asinh/acosh/atanh"))


def special_functions(a: Field[np.float64], g: Field[np.float64], r: Field[np.float64], e: Field[np.float64],
                      ec: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        g = gamma(a)
        r = cbrt(a - 1.0)
        e = erf(a - 1.0)
        ec = erfc(a - 1.0)


CASES.append(Case(special_functions, positive=True, needs="gamma/cbrt/erf/erfc"))


def rounding_builtins(a: Field[np.float64], r: Field[np.float64], ra: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        r = round(a * 4.0)
        ra = round_away_from_zero(a * 4.0)


CASES.append(Case(rounding_builtins, arrays={"a": lambda rng, s, dt: rng.integers(-8, 9, s) / 8.0},
                  needs="round/round_away_from_zero"))


def mod_builtin(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = mod(a, 0.3)


CASES.append(Case(mod_builtin, needs="mod"))


def cast_builtins(a: Field[np.float64], narrow: Field[np.float32], n: Field[np.int32], m: Field[np.int64],
                  wide: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        narrow = float32(a)
        n = int32(a * 7.0)
        m = int64(a * 70.0)
        wide = float64(narrow)


CASES.append(Case(cast_builtins, needs="float32/float64/int32/int64 casts"))


def float32_builtins(a: Field[np.float32], out: Field[np.float32]):
    with computation(PARALLEL), interval(...):
        out = asin(a) + atan(a) + cbrt(a)


CASES.append(Case(float32_builtins, needs="asin/atan/cbrt on float32"))


def jk_field(a: Field[np.float64], plane: Field[JK, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a * plane


CASES.append(Case(jk_field, needs="Field[JK, ...]"))


def ik_field_offset(plane: Field[IK, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, -1):
        out = plane[1, 0] + plane[0, 1]


CASES.append(Case(ik_field_offset, needs="Field[IK, ...] read at offsets"))


def module_alias(a: gs.Field[np.float64], out: gs.Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = sqrt(a) + tanh(a) if a > 1.0 else a  # builtins need no import line


CASES.append(Case(module_alias, positive=True))


def externals_through_alias(a: Field[np.float64], out: Field[np.float64]):
    from gt4py.cartesian.__externals__ import SHIFT

    with computation(PARALLEL), interval(...):
        out = a + SHIFT


CASES.append(Case(externals_through_alias, externals={"SHIFT": 0.25},
                  needs="from gt4py.cartesian.__externals__ import inside definitions"))


def k_value_in_expression(out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = float(K + 1) * 0.5


CASES.append(Case(k_value_in_expression, needs="K as a value"))


def i_value_rejected(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if I == 2:
            out = a


CASES.append(Case(i_value_rejected, expect="reject", needs="I and J are not values (only K is)"))
