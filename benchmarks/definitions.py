"""The benchmarked stencils in GTScript, one definition per stencil, for any float dtype.

`definitions(dtype)` returns {name: definition function}; the annotations close over `dtype`, so
each dtype gives a distinct stencil (and cache key). Literals are weak (NEP 50): in a float32
stencil they stay float32, as in the NumPy, Numba and C baselines.

Every stencil's compute domain is the array minus its halo (`HALO`), the whole K axis.
"""

import numpy as np

from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval

#: Horizontal halo (same on every side in I and J) each stencil reads outside its domain.
HALO = {"copy": 0, "laplacian": 1, "hdiff": 2, "thomas": 0, "advection": 1}


def definitions(dtype=np.float64):
    """The GTScript definition of every benchmarked stencil, for `dtype` fields."""

    def copy(inp: Field[dtype], out: Field[dtype]):
        with computation(PARALLEL), interval(...):
            out = inp

    def laplacian(inp: Field[dtype], out: Field[dtype]):
        with computation(PARALLEL), interval(...):
            out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]

    def hdiff(inp: Field[dtype], coeff: Field[dtype], out: Field[dtype]):
        with computation(PARALLEL), interval(...):
            lap = 4.0 * inp[0, 0, 0] - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
            res = lap[1, 0, 0] - lap[0, 0, 0]
            flx = 0.0 if res * (inp[1, 0, 0] - inp[0, 0, 0]) > 0.0 else res
            res = lap[0, 1, 0] - lap[0, 0, 0]
            fly = 0.0 if res * (inp[0, 1, 0] - inp[0, 0, 0]) > 0.0 else res
            out = inp - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])

    def thomas(a: Field[dtype], b: Field[dtype], c: Field[dtype], d: Field[dtype], x: Field[dtype]):
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

    def advection(q: Field[dtype], u: Field[dtype], v: Field[dtype], w: Field[dtype],
                  out: Field[dtype], dtdx: dtype, dtdy: dtype, dtdz: dtype):
        # 1. Upwind fluxes through the west (fx) and south (fy) faces of each cell; u and v are
        #    the velocities on those faces.
        with computation(PARALLEL), interval(...):
            fx = u * (q[-1, 0, 0] if u > 0.0 else q)
            fy = v * (q[0, -1, 0] if v > 0.0 else q)
        # 2. Explicit horizontal flux divergence, then implicit upwind transport down the column
        #    with a non-negative speed w (sedimentation-like, K increasing downwards): flux form,
        #    so mass leaving level k-1 enters level k; no inflow through the top.
        with computation(FORWARD):
            with interval(0, 1):
                qh = q - dtdx * (fx[1, 0, 0] - fx) - dtdy * (fy[0, 1, 0] - fy)
                qn = qh / (1.0 + dtdz * w)
            with interval(1, None):
                qh = q - dtdx * (fx[1, 0, 0] - fx) - dtdy * (fy[0, 1, 0] - fy)
                qn = (qh + dtdz * w[0, 0, -1] * qn[0, 0, -1]) / (1.0 + dtdz * w)
        # 3. Keep the tracer non-negative (a safeguard against round-off undershoots).
        with computation(PARALLEL), interval(...):
            out = qn if qn > 0.0 else 0.0

    return {"copy": copy, "laplacian": laplacian, "hdiff": hdiff, "thomas": thomas,
            "advection": advection}
