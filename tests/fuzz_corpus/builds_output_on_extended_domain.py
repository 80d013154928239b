# builds: an output read at an offset after it is written is computed on its extended domain (the fuzz oracle once took those documented writes in the halo for stray writes)
import numpy as np

import gtscript
from gtscript import (BACKWARD, FORWARD, IJ, PARALLEL, Field, I, J, K, computation, exp,
                      horizontal, interval, log, region, sin, sqrt, tanh)

@gtscript.function
def f_lap(x):
    return x[1, 0, 0] + x[-1, 0, 0] + x[0, 1, 0] + x[0, -1, 0] - 4.0 * x[0, 0, 0]


@gtscript.function
def f_mix(x, y, w):
    return w * x + (1.0 - w) * y


@gtscript.function
def f_pair(x):
    return x[0, 0, 1] - x[0, 0, 0], max(x[1, 0, 0], x[0, 0, -1])


@gtscript.function
def f_nested(x, w):
    d, m = f_pair(x)
    return f_mix(d, m, w) + 0.5 * f_lap(x)


def stencil(a0: Field[np.float64],
            a1: Field[np.float32],
            m0: Field[np.int32],
            b0: Field[np.bool_],
            v0: Field[(np.float64, (3,))],
            h0: Field[IJ, np.float64],
            z0: Field[K, np.float64],
            o0: Field[np.float64],
            o1: Field[np.float32],
            o2: Field[np.int32],
            w0: Field[(np.float64, (2,))],
            s: float,
            r: np.float32,
            n: int,
            flag: bool):
    with computation(PARALLEL):
        with interval(1, -1):
            if b0[0, 0, 0]:
                o0 = h0[0, 0]
            w0 = sqrt(abs((0.5 / (1.5 + abs(a0[0, 0, 0])))))
        with interval(-1, None):
            with horizontal(region[I[0], :], region[I[0], J[0]]):
                o0 = 0.5
    with computation(PARALLEL):
        with interval(1, None):
            t0 = 0.5
            tw = 0.0
            while tw < min(abs(o0[1, 0, 0]), 3.0):
                tw = tw + 1.0
                t0 = a0[0, 0, 0]
            o1 = t0 + o0[0, -2, 0]
