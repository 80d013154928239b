"""Definitions for tests/gt4py_areas.py's probes (a module of their own: frontends read the
source file)."""

import numpy as np
from gt4py.cartesian import gtscript as gt4py_gtscript

import gtscript
from gtscript import IJ, PARALLEL, Field, I, J, computation, horizontal, interval, region


def gt4py_copy(a: gt4py_gtscript.Field[np.float64], b: gt4py_gtscript.Field[np.float64]):
    with computation(PARALLEL), interval(...):
        b = a


def corner_externals():
    return {"i_start": I[0] + 2, "j_start": J[0] + 2}


def corner_fill(q_out: Field[np.float64], q_in: Field[np.float64]):
    from __externals__ import i_start, j_start

    with computation(PARALLEL), interval(...):
        with horizontal(region[i_start - 1, j_start - 1]):
            q_out = q_in[0, 1, 0]


def unused_ij(a: Field[np.float64], b: Field[IJ, np.float64], c: Field[np.float64]):
    from __externals__ import USE

    with computation(PARALLEL), interval(...):
        if __INLINED(USE):
            c = a + b
        else:
            c = a



def runtime_bound(a: gtscript.Field[np.float64], out: gtscript.Field[np.float64], n: int):
    with computation(PARALLEL), interval(0, n):
        out = a


PROBE_SCALE = 1.0


@gt4py_gtscript.function
def probe_scaled(f):
    return PROBE_SCALE * f


PROBE_SCALE = 3.0  # GT4Py's function keeps 1.0 (it captured its globals when decorated)


def gt4py_function_call(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = probe_scaled(a)
