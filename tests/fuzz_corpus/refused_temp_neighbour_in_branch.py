# refused: a temporary read at a neighbour in the branch of an if on a field that later updates it (first grammar: the parallel model's documented refusal, on both backends)
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
        with interval(...):
            t1 = a0[1, 0, 0] + a1[0, -1, 0]
            if b0[0, 0, 0]:
                o0 = t1[2, 1, 0] + s
                t1 = a0[0, 0, 0] * 0.5
            o0 = t1
