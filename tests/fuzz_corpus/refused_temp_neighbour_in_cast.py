# refused: a temporary read at a neighbour inside a float-to-int cast in a branch that updates it (the grammar once generated it as well-formed; every backend refuses it alike)
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
    with computation(FORWARD):
        with interval(0, 1):
            t2 = s
            if (a0[-1, -2, -1] < -1.25) or (m0[-2, -2, -1] < 0):
                t2 = s
                w0[0, 0, 0][1] = (int(min(max(t2[2, -1, 0], -50.0), 50.0)) * 0.5)
                t2 = h0[-1, -2]
