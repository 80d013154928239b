"""Computations, iteration policies, every interval form, vertical offsets and writes."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, __INLINED, computation, interval

from gt4py_corpus.case import Case, k_index, k_shift

CASES = []


def whole_column(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, None):
        out = a + 1.0


CASES.append(Case(whole_column))


def first_level(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, 1):
        out = a


CASES.append(Case(first_level))


def last_level(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(-1, None):
        out = a * 3.0


CASES.append(Case(last_level))


def inner_levels(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(1, -1):
        out = a[0, 0, 1] - a[0, 0, -1]


CASES.append(Case(inner_levels))


def fixed_levels(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(2, 5):
        out = a


CASES.append(Case(fixed_levels))


def negative_bounds(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(-3, -1):
        out = a + a[0, 0, 1]


CASES.append(Case(negative_bounds))


def all_but_two_top(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(0, -2):
        out = a[0, 0, 2]


CASES.append(Case(all_but_two_top))


def nested_intervals(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL):
        with interval(0, 1):
            out = a[0, 0, 1] - a
        with interval(1, -1):
            out = 0.5 * (a[0, 0, 1] - a[0, 0, -1])
        with interval(-1, None):
            out = a - a[0, 0, -1]


CASES.append(Case(nested_intervals))


def forward_cumsum(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            out = a
        with interval(1, None):
            out = out[0, 0, -1] + a


CASES.append(Case(forward_cumsum))


def backward_cumsum(a: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD):
        with interval(-1, None):
            out = a
        with interval(0, -1):
            out = out[0, 0, 1] + a


CASES.append(Case(backward_cumsum))


def forward_one_line(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD), interval(1, None):
        out = 0.5 * out[0, 0, -1] + a


CASES.append(Case(forward_one_line))


def backward_whole(a: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD), interval(...):
        out = a * 2.0


CASES.append(Case(backward_whole))


def sequential_computations(a: Field[np.float64], b: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a * a
    with computation(FORWARD), interval(1, None):
        out = b[0, 0, -1] + a
    with computation(BACKWARD), interval(0, 1):
        out = b


CASES.append(Case(sequential_computations))


def thomas_solver(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64], d: Field[np.float64],
                  x: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            cp = c / b
            dp = d / b
        with interval(1, None):
            m = b - a * cp[0, 0, -1]
            cp = c / m
            dp = (d - a * dp[0, 0, -1]) / m
    with computation(BACKWARD):
        with interval(-1, None):
            x = dp
        with interval(0, -1):
            x = dp - cp * x[0, 0, 1]


CASES.append(Case(thomas_solver, arrays={"b": lambda rng, s, dt: rng.uniform(3.0, 4.0, s)}))


def forward_two_levels_back(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 2):
            out = a
        with interval(2, None):
            out = out[0, 0, -1] - out[0, 0, -2] + a


CASES.append(Case(forward_two_levels_back))


def forward_temporary_recurrence(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            acc = a
        with interval(1, None):
            acc = acc[0, 0, -1] * 0.5 + a
    with computation(PARALLEL), interval(...):
        out = acc


CASES.append(Case(forward_temporary_recurrence))


def off_centre_forward_write(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD), interval(1, None):
        out[0, 0, -1] = a


CASES.append(Case(off_centre_forward_write))


def off_centre_backward_write(a: Field[np.float64], out: Field[np.float64]):
    with computation(BACKWARD), interval(0, -1):
        out[0, 0, 1] = 2.0 * a


CASES.append(Case(off_centre_backward_write))


def off_centre_parallel_write(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(1, None):
        out[0, 0, -1] = a


CASES.append(Case(off_centre_parallel_write, expect="reject"))


def variable_offset_field(a: Field[np.float64], shift: Field[np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[0, 0, shift]


CASES.append(Case(variable_offset_field, arrays={"shift": k_shift()}))


def variable_offset_scalar(a: Field[np.float64], out: Field[np.float64], lag: int):
    with computation(PARALLEL), interval(0, -2):
        out = a[0, 0, lag]


CASES.append(Case(variable_offset_scalar, scalars={"lag": 2}))


def variable_offset_expression(a: Field[np.float64], shift: Field[np.int32], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[0, 0, shift + 1] - a[0, 0, shift]


CASES.append(Case(variable_offset_expression, arrays={"shift": k_shift(0, 1)}))


def variable_offset_write(a: Field[np.float64], out: Field[np.float64]):
    with computation(FORWARD), interval(0, -1):
        lev = 1
        out[0, 0, lev] = a


CASES.append(Case(variable_offset_write, needs="variable K offsets in writes"))


def absolute_k_constant(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a - a.at(K=0)


CASES.append(Case(absolute_k_constant, oracle="debug"))


def absolute_k_scalar(a: Field[np.float64], out: Field[np.float64], lev: int):
    with computation(PARALLEL), interval(...):
        out = a.at(K=lev) + a


CASES.append(Case(absolute_k_scalar, scalars={"lev": 4}, oracle="debug"))


def absolute_k_ij_field(a: Field[np.float64], top: Field[IJ, np.int64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a.at(K=top)


CASES.append(Case(absolute_k_ij_field, arrays={"top": k_index()}, oracle="debug"))


def absolute_k_expression(a: Field[np.float64], out: Field[np.float64], lev: int):
    with computation(FORWARD), interval(...):
        out = a.at(K=lev - 1) * a.at(K=lev + 1)


CASES.append(Case(absolute_k_expression, scalars={"lev": 3}, oracle="debug"))


def overlapping_intervals(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL):
        with interval(0, 3):
            out = a
        with interval(2, None):
            out = -a


CASES.append(Case(overlapping_intervals, expect="reject"))


def k_offset_on_ij_field(s: Field[IJ, np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = s[0, 0, 1]


CASES.append(Case(k_offset_on_ij_field, expect="reject"))


def empty_inlined_interval(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import USE_TOP

    with computation(PARALLEL), interval(0, 1):
        out = a
    with computation(PARALLEL), interval(1, 3):
        if __INLINED(USE_TOP):
            out = a + 1.0


CASES.append(Case(empty_inlined_interval, externals={"USE_TOP": False}, shape=(10, 9, 2),
                  needs="an interval emptied by __INLINED does not count toward the K levels"))


def runtime_interval_bound(a: Field[np.float64], out: Field[np.float64], nlev: int):
    with computation(PARALLEL), interval(0, nlev):
        out = a


CASES.append(Case(runtime_interval_bound, scalars={"nlev": 4}, oracle="debug", needs="run-time interval bounds"))
