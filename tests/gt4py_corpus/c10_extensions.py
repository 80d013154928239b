"""What GT4Py 1.1 refuses and gtscript accepts, on purpose: each entry's results are checked
against hand-written NumPy instead (docs/language.md, "Coming from GT4Py")."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import FORWARD, PARALLEL, Field, I, J, K, computation, horizontal, interval, region

from gt4py_corpus.case import Case

CASES = []

H = (slice(2, -2), slice(2, -2))  # the default compute domain's horizontal part


def _inner(args, name, value):
    """``args[name]`` with the default compute domain set to ``value``."""
    out = args[name].copy()
    out[H] = value
    return out


@gtscript.function
def slope(f):
    return f[1, 0, 0] - f[-1, 0, 0]


def floor_division(a: Field[np.int64], b: Field[np.int64], q: Field[np.int64]):
    with computation(PARALLEL), interval(...):
        q = a // b


CASES.append(Case(floor_division, expect="beyond",
                  arrays={"b": lambda rng, s, dt: (rng.integers(1, 4, s) * rng.choice([-1, 1], s)).astype(dt)},
                  reference=lambda x: {**x, "q": _inner(x, "q", x["a"][H] // x["b"][H])}))


def chained_comparison(a: Field[np.float64], out: Field[np.bool_]):
    with computation(PARALLEL), interval(...):
        out = -0.5 < a < 0.5


CASES.append(Case(chained_comparison, expect="beyond",
                  reference=lambda x: {**x, "out": _inner(x, "out", (-0.5 < x["a"][H]) & (x["a"][H] < 0.5))}))


def numpy_casts(a: Field[np.float64], narrow: Field[np.float32], n: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        narrow = np.float32(a)
        n = np.int32(a * 7.0)


CASES.append(Case(numpy_casts, expect="beyond",
                  reference=lambda x: {**x, "narrow": _inner(x, "narrow", x["a"][H].astype(np.float32)),
                                       "n": _inner(x, "n", np.trunc(x["a"][H] * 7.0).astype(np.int32))}))


def function_in_condition(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if slope(a) > 0.0:
            out = a
        else:
            out = -a


def _by_slope(x):
    a = x["a"]
    s = a[3:-1, 2:-2] - a[1:-3, 2:-2]
    return {**x, "out": _inner(x, "out", np.where(s > 0.0, a[H], -a[H]))}


CASES.append(Case(function_in_condition, expect="beyond", reference=_by_slope))


def axis_index_interval(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(K[1], K[-1]):
        out = a


def _inner_levels(x):
    out = x["out"].copy()
    out[2:-2, 2:-2, 1:-1] = x["a"][2:-2, 2:-2, 1:-1]
    return {**x, "out": out}


CASES.append(Case(axis_index_interval, expect="beyond", reference=_inner_levels))


def forward_intervals_any_order(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(1, None):
            out = a
        with interval(0, 1):
            out = -a


def _negated_bottom(x):
    out = x["out"].copy()
    out[2:-2, 2:-2, 1:] = x["a"][2:-2, 2:-2, 1:]
    out[2:-2, 2:-2, 0] = -x["a"][2:-2, 2:-2, 0]
    return {**x, "out": out}


CASES.append(Case(forward_intervals_any_order, expect="beyond", reference=_negated_bottom))


def write_then_read_at_offset(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = b
        c = a[1, 0, 0]


def _copied_then_shifted(x):
    # gtscript computes a written field on the extended domain its later offset reads need
    # (docs/parallel-model.md): 'a' is written one point beyond the domain's end in I too
    a = x["a"].copy()
    a[2:-1, 2:-2] = x["b"][2:-1, 2:-2]
    return {**x, "a": a, "c": _inner(x, "c", x["b"][3:-1, 2:-2])}


CASES.append(Case(write_then_read_at_offset, expect="beyond", reference=_copied_then_shifted))


def temporary_self_shift(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a
        t = t[1, 0, 0] + t
        out = t


CASES.append(Case(temporary_self_shift, expect="beyond",
                  reference=lambda x: {**x, "out": _inner(x, "out", x["a"][3:-1, 2:-2] + x["a"][H])}))


def region_absolute_index(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0]:I[2], J[1]:J[-1]]):
            out = 2.0 * a


def _doubled_block(x):
    out = _inner(x, "out", x["a"][H])
    out[2:4, 3:-3] = 2.0 * x["a"][2:4, 3:-3]
    return {**x, "out": out}


CASES.append(Case(region_absolute_index, expect="beyond", reference=_doubled_block))


def module_attribute_policy(a: Field[np.float64], out: Field[np.float64]):
    with computation(gtscript.PARALLEL), interval(...):
        out = a + 1.0


CASES.append(Case(module_attribute_policy, expect="beyond",
                  reference=lambda x: {**x, "out": _inner(x, "out", x["a"][H] + 1.0)}))
