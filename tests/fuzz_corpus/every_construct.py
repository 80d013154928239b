# builds: every construct of the grammar in one definition (vertical sweeps both ways, functions, data dimensions, IJ and K fields, while, regions, int arithmetic with floor division and modulo of negative values)
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
            o0 = a0[0, 0, 0] + z0[1]
        with interval(1, None):
            o0 = 0.5 * o0[0, 0, -1] + f_nested(a0, s)
            o2 = (m0[1, 0, 0] // (abs(m0[0, 1, -1]) + 1)) + (m0[0, 0, 0] % (abs(n) + 2))
    with computation(BACKWARD):
        with interval(-1, None):
            o1 = a1[0, 0, 0] * r + h0[1, -1]
        with interval(0, -1):
            o1 = 0.5 * o1[0, 0, 1] + f_lap(a1)
    with computation(PARALLEL):
        with interval(1, -1):
            t0, t1 = f_pair(a0)
            t2 = f_mix(t0[1, 0, 0], v0[-1, 2, 1][2], r) + float(m0[0, 0, 1] * n)
            w0[0, 0, 0][0] = t2[0, -2, 0] + t1
            w0[0, 0, 0][1] = (t0 if b0[0, 0, 0] and flag else -t1) + 0.1 * v0[0, 0, 0][1]
            tw = 0.0
            while tw < min(abs(t2), 3.0):
                tw = tw + 1.0
                w0[0, 0, 0][0] = w0[0, 0, 0][0] * 0.5 + t0
            with horizontal(region[I[0], :], region[:, J[-1] + 1]):
                o0 = -t1
            if a0[0, 0, 0] > 0.0:
                o2 = int(min(max(t2 * 3.0, -50.0), 50.0))
            elif m0[0, 0, 0] < 0:
                o2 = -m0[0, 0, 0] // 2
            else:
                o2 = m0[0, 0, 0] % -3
