"""GT4Py versions of the benchmarked stencils, for the suite's GT4Py comparison columns.

The same five stencils as `definitions.py`, written against GT4Py's own `gtscript` (GT4Py
reads the definition's source and resolves its annotations itself, so gtscript's definitions
cannot be passed to it). Each backend is timed on arrays in its preferred layout
(`gt4py.storage.from_array` with that backend), with the same origin and domain as gtscript.

    stencils = gt4py_kernels.load("numpy", np.float64)   # importing this module needs gt4py
    stencils["hdiff"](inp=..., coeff=..., out=..., origin=(2, 2, 0), domain=(...))

GT4Py keeps its generated code under GT_CACHE_ROOT (default: .gt_cache in the working
directory); the suite points it at a temporary directory unless it is set.
"""

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval

#: The backends the suite can time: "numpy" always, the compiled ones behind --gt4py-compiled
#: (they need g++ and the boost headers, and tens of seconds per stencil to build).
NUMPY = ("numpy",)
COMPILED = ("gt:cpu_ifirst", "gt:cpu_kfirst", "dace:cpu")


def _definitions(dtype):
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
        with computation(PARALLEL), interval(...):
            fx = u * (q[-1, 0, 0] if u > 0.0 else q)
            fy = v * (q[0, -1, 0] if v > 0.0 else q)
        with computation(FORWARD):
            with interval(0, 1):
                qh = q - dtdx * (fx[1, 0, 0] - fx) - dtdy * (fy[0, 1, 0] - fy)
                qn = qh / (1.0 + dtdz * w)
            with interval(1, None):
                qh = q - dtdx * (fx[1, 0, 0] - fx) - dtdy * (fy[0, 1, 0] - fy)
                qn = (qh + dtdz * w[0, 0, -1] * qn[0, 0, -1]) / (1.0 + dtdz * w)
        with computation(PARALLEL), interval(...):
            out = qn if qn > 0.0 else 0.0

    return {"copy": copy, "laplacian": laplacian, "hdiff": hdiff, "thomas": thomas,
            "advection": advection}


def load(backend, dtype, names):
    """{stencil name: GT4Py stencil object} for `backend` and `dtype` (built now)."""
    defs = _definitions(np.dtype(dtype).type)
    return {name: gtscript.stencil(backend=backend, definition=defs[name]) for name in names}


def as_storage(array, backend, halo):
    """A copy of `array` in `backend`'s preferred layout, its interior aligned as GT4Py wants."""
    import gt4py.storage

    # an IJ field (2-D) or a K field (1-D) has the leading entries of the 3-D index
    return gt4py.storage.from_array(array, dtype=array.dtype, backend=backend,
                                    aligned_index=(halo, halo, 0)[: array.ndim])
