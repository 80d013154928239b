"""Numba versions of the benchmarked stencils, written the way a Numba user writes them:
`@njit(parallel=True)` loops over C-ordered (I, J, K) arrays, `prange` over the outer I axis,
K innermost, each stencil fused into one pass (small helpers inlined).

    kernels = numba_kernels.load(np.float64)   # importing this module needs numba
    kernels["hdiff"](inp, coeff, out)

Numba types a Python float literal as float64, which would silently promote float32 stencils
to float64 arithmetic; the kernels therefore close over literals of the element type (Numba
freezes closure variables as typed constants), one set of kernels per dtype. Compiled
functions are cached on disk (`cache=True`), so only the first run pays Numba's compile time.
"""

import numba
import numpy as np
from numba import njit, prange

_kernels = {}

# Small point-wise helpers, inlined into the kernels. They live at module level, not in the
# per-dtype closure: Numba's disk cache cannot key a kernel that closes over other compiled
# functions, and would recompile it in every process.


@njit(inline="always")
def lap(inp, i, j, k, four):
    return four * inp[i, j, k] - (inp[i + 1, j, k] + inp[i - 1, j, k]
                                  + inp[i, j + 1, k] + inp[i, j - 1, k])


@njit(inline="always")
def limited(res, diff, zero):
    return zero if res * diff > zero else res


@njit(inline="always")
def upwind(vel, q_up, q_here, zero):
    return vel * (q_up if vel > zero else q_here)


def _make(dtype):
    zero, one, four = dtype(0.0), dtype(1.0), dtype(4.0)

    @njit(parallel=True, cache=True)
    def copy(inp, out):
        ni, nj, nk = inp.shape
        for i in prange(ni):
            for j in range(nj):
                for k in range(nk):
                    out[i, j, k] = inp[i, j, k]

    @njit(parallel=True, cache=True)
    def laplacian(inp, out):
        ni, nj, nk = inp.shape
        for i in prange(1, ni - 1):
            for j in range(1, nj - 1):
                for k in range(nk):
                    out[i, j, k] = (-four * inp[i, j, k] + inp[i + 1, j, k] + inp[i - 1, j, k]
                                    + inp[i, j + 1, k] + inp[i, j - 1, k])

    @njit(parallel=True, cache=True)
    def hdiff(inp, coeff, out):
        ni, nj, nk = inp.shape
        for i in prange(2, ni - 2):
            for j in range(2, nj - 2):
                for k in range(nk):
                    c = lap(inp, i, j, k, four)
                    flx = limited(lap(inp, i + 1, j, k, four) - c,
                                  inp[i + 1, j, k] - inp[i, j, k], zero)
                    flx_w = limited(c - lap(inp, i - 1, j, k, four),
                                    inp[i, j, k] - inp[i - 1, j, k], zero)
                    fly = limited(lap(inp, i, j + 1, k, four) - c,
                                  inp[i, j + 1, k] - inp[i, j, k], zero)
                    fly_s = limited(c - lap(inp, i, j - 1, k, four),
                                    inp[i, j, k] - inp[i, j - 1, k], zero)
                    out[i, j, k] = inp[i, j, k] - coeff[i, j, k] * (flx - flx_w + fly - fly_s)

    @njit(parallel=True, cache=True)
    def thomas(a, b, c, d, x):
        ni, nj, nk = a.shape
        for i in prange(ni):
            cp = np.empty(nk, dtype=a.dtype)
            for j in range(nj):
                cp[0] = c[i, j, 0] / b[i, j, 0]
                x[i, j, 0] = d[i, j, 0] / b[i, j, 0]
                for k in range(1, nk):
                    denom = b[i, j, k] - a[i, j, k] * cp[k - 1]
                    cp[k] = c[i, j, k] / denom
                    x[i, j, k] = (d[i, j, k] - a[i, j, k] * x[i, j, k - 1]) / denom
                for k in range(nk - 2, -1, -1):
                    x[i, j, k] -= cp[k] * x[i, j, k + 1]

    @njit(parallel=True, cache=True)
    def advection(q, u, v, w, out, dtdx, dtdy, dtdz):
        ni, nj, nk = q.shape
        for i in prange(1, ni - 1):
            for j in range(1, nj - 1):
                prev = zero
                for k in range(nk):
                    qh = (q[i, j, k]
                          - dtdx * (upwind(u[i + 1, j, k], q[i, j, k], q[i + 1, j, k], zero)
                                    - upwind(u[i, j, k], q[i - 1, j, k], q[i, j, k], zero))
                          - dtdy * (upwind(v[i, j + 1, k], q[i, j, k], q[i, j + 1, k], zero)
                                    - upwind(v[i, j, k], q[i, j - 1, k], q[i, j, k], zero)))
                    inflow = dtdz * w[i, j, k - 1] * prev if k > 0 else zero
                    prev = (qh + inflow) / (one + dtdz * w[i, j, k])
                    out[i, j, k] = prev if prev > zero else zero

    kernels = {"copy": copy, "laplacian": laplacian, "hdiff": hdiff, "thomas": thomas}

    def advection_typed(q, u, v, w, out, dtdx, dtdy, dtdz):
        # scalars in the element type, so float32 arithmetic stays float32
        advection(q, u, v, w, out, dtype(dtdx), dtype(dtdy), dtype(dtdz))

    kernels["advection"] = advection_typed
    return kernels


def load(dtype):
    """{stencil name: compiled kernel} for arrays of `dtype` (compiled lazily on first call)."""
    dtype = np.dtype(dtype).type
    if dtype not in _kernels:
        _kernels[dtype] = _make(dtype)
    return _kernels[dtype]
