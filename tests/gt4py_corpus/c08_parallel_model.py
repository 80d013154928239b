"""What the parallel model refuses (docs/parallel-model.md): results that would depend on the
order in which points are computed. GT4Py 1.1 refuses these definitions too (with a
ValueError); gtscript's error must say why, and stay catchable as GT4Py's is. The call that
passes one array as an output and as an input read with an offset runs on GT4Py and is refused
by gtscript. What the model allows, GT4Py's results check."""

import numpy as np

from gt4py.cartesian.gtscript import FORWARD, PARALLEL, Field, computation, interval

from gt4py_corpus.case import Case

CASES = []


def shifted_self_assignment(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = a[1, 0, 0]


CASES.append(Case(shifted_self_assignment, expect="deliberate", words=("shifted self-assignment", "'a'")))


def shifted_self_assignment_j(a: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = 0.5 * (a[0, -1, 0] + a[0, 1, 0])


CASES.append(Case(shifted_self_assignment_j, expect="deliberate", words=("shifted self-assignment", "'a'")))


def shifted_self_assignment_forward(a: Field[np.float64]):
    with computation(FORWARD), interval(...):
        a = a[-1, 0, 0] + 1.0


CASES.append(Case(shifted_self_assignment_forward, expect="deliberate", words=("shifted self-assignment", "'a'")))


def write_after_offset_read(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a[1, 0, 0]
        a = b


CASES.append(Case(write_after_offset_read, expect="deliberate", words=("write after read with offset", "'a'")))


def write_after_offset_read_through_temporary(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        tmp = a[0, 1, 0] - a
        out = tmp
        a = out * 2.0


CASES.append(Case(write_after_offset_read_through_temporary, expect="deliberate",
                  words=("write after read with offset", "'a'")))


def write_after_offset_read_later_computation(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a[-1, 0, 0] + a[1, 0, 0]
    with computation(PARALLEL), interval(...):
        a = out


CASES.append(Case(write_after_offset_read_later_computation, expect="deliberate",
                  words=("write after read with offset", "'a'")))


def parallel_self_read_above(a: Field[np.float64]):
    with computation(PARALLEL), interval(0, -1):
        a = a[0, 0, 1] + 1.0


CASES.append(Case(parallel_self_read_above, expect="deliberate", words=("another K level", "PARALLEL")))


def parallel_self_read_below(a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(1, None):
        a = b + a[0, 0, -1]


CASES.append(Case(parallel_self_read_below, expect="deliberate", words=("another K level", "PARALLEL")))


def conditional_on_offset_read_then_write(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        if a[1, 0, 0] > 0.0:
            a = 0.0
        out = a


CASES.append(Case(conditional_on_offset_read_then_write, expect="deliberate", words=("'a'",)))


def forward_read_above_then_write(a: Field[np.float64], b: Field[np.float64]):
    with computation(FORWARD), interval(0, -1):
        b = a[0, 0, 1]
        a = b


CASES.append(Case(forward_read_above_then_write))


def forward_self_read_below(a: Field[np.float64]):
    with computation(FORWARD), interval(1, None):
        a = a[0, 0, -1] + 1.0


CASES.append(Case(forward_self_read_below))



def advect_in_place(u: Field[np.float64], out: Field[np.float64], c: float):
    with computation(PARALLEL), interval(...):
        out = u - c * (u - u[-1, 0, 0])


# the call passes one array as `u` and `out`: GT4Py runs it, gtscript refuses it
CASES.append(Case(advect_in_place, expect="deliberate", scalars={"c": 0.5}, alias={"out": "u"},
                  words=("share memory", "'out'", "'u'")))


def pointwise_in_place(u: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = 2.0 * u + 1.0


# the same array as input and output, read at zero offset only: a point-wise update, allowed
CASES.append(Case(pointwise_in_place, alias={"out": "u"}))


def while_condition_offset(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        while out[1, 0, 0] > 10.0:
            out = out - 1.0


CASES.append(Case(while_condition_offset, expect="deliberate", words=("while loop", "'out'")))
