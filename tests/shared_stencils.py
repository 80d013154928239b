"""Stencil definitions, their hand-written NumPy twins and a helper several test modules use
(not a test module itself).

The definitions are the classic ones (GT4Py's examples); benchmarks/definitions.py has its
own copies on purpose: the tests never import the benchmark suite.
"""

import numpy as np

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval


def laplacian_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def hdiff_defn(inp: Field[np.float64], coeff: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap_f = 4.0 * inp[0, 0, 0] - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
        res = lap_f[1, 0, 0] - lap_f[0, 0, 0]
        flx = 0.0 if res * (inp[1, 0, 0] - inp[0, 0, 0]) > 0.0 else res
        res = lap_f[0, 1, 0] - lap_f[0, 0, 0]
        fly = 0.0 if res * (inp[0, 1, 0] - inp[0, 0, 0]) > 0.0 else res
        out = inp - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])


def np_hdiff(inp, coeff):
    """hdiff_defn written out in NumPy, operation for operation (inp, coeff: the domain plus a
    halo of 2)."""
    lap = 4.0 * inp[1:-1, 1:-1] - (inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2])
    res = lap[1:, 1:-1] - lap[:-1, 1:-1]
    flx = np.where(res * (inp[2:-1, 2:-2] - inp[1:-2, 2:-2]) > 0.0, 0.0, res)
    res = lap[1:-1, 1:] - lap[1:-1, :-1]
    fly = np.where(res * (inp[2:-2, 2:-1] - inp[2:-2, 1:-2]) > 0.0, 0.0, res)
    return inp[2:-2, 2:-2] - coeff[2:-2, 2:-2] * (flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1])


def np_thomas(a, b, c, d):
    """thomas_defn written out in NumPy, level by level."""
    cp, dp, x = np.empty_like(a), np.empty_like(a), np.empty_like(a)
    cp[..., 0] = c[..., 0] / b[..., 0]
    dp[..., 0] = d[..., 0] / b[..., 0]
    for k in range(1, a.shape[2]):
        cp[..., k] = c[..., k] / (b[..., k] - a[..., k] * cp[..., k - 1])
        dp[..., k] = ((d[..., k] - a[..., k] * dp[..., k - 1])
                      / (b[..., k] - a[..., k] * cp[..., k - 1]))
    x[..., -1] = dp[..., -1]
    for k in range(a.shape[2] - 2, -1, -1):
        x[..., k] = dp[..., k] - cp[..., k] * x[..., k + 1]
    return x


def tridiagonal_solver(dtype):
    """The Thomas algorithm for `dtype` fields: a FORWARD and a BACKWARD sweep."""

    def thomas_defn(a: Field[dtype], b: Field[dtype], c: Field[dtype], d: Field[dtype],
                    x: Field[dtype]):
        with computation(FORWARD):
            with interval(0, 1):
                cp = c / b
                dp = d / b
            with interval(1, None):
                cp = c / (b - a * cp[0, 0, -1])
                dp = (d - a * dp[0, 0, -1]) / (b - a * cp[0, 0, -1])
        with computation(BACKWARD):
            with interval(-1, None):
                x = dp
            with interval(0, -1):
                x = dp - cp * x[0, 0, 1]

    return thomas_defn


thomas_defn = tridiagonal_solver(np.float64)


def run_cpu_and_numpy(defn, arrays, **call):
    """Runs `defn` on the cpu backend (freshly built) and on the numpy reference backend, each
    on its own copies of `arrays`; returns (cpu results, numpy results)."""
    cpu = gtscript.stencil("cpu", defn, rebuild=True)
    ref = gtscript.stencil("numpy", defn)
    got = [x.copy(order="K") for x in arrays]
    want = [x.copy(order="K") for x in arrays]
    cpu(*got, **call)
    ref(*want, **call)
    return got, want
