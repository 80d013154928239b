"""The isentropic-diagnostics tutorial: on levels of constant potential temperature theta
(level 0 at the top), the pressure follows from the isentropic density by integrating
downwards from the top pressure; the Exner function from the pressure; the Montgomery
potential and the geometric height by integrating upwards from the ground."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, K, computation, interval

NX, NY, NZ = 8, 7, 12
G, RD, CP, P_REF, P_TOP = 9.81, 287.0, 1004.0, 1.0e5, 1.0e4


def diagnostics(
    theta: Field[K, np.float64],
    s: Field[np.float64],
    h_surface: Field[IJ, np.float64],
    p: Field[np.float64],
    exn: Field[np.float64],
    mtg: Field[np.float64],
    h: Field[np.float64],
    *,
    p_top: float,
):
    from __externals__ import CP, G, P_REF, RD

    # the pressure on each isentrope: the top one is given, each one below adds the weight of
    # the layer above it (isentropic density times the layer's theta thickness)
    with computation(FORWARD):
        with interval(0, 1):
            p = p_top
        with interval(1, None):
            p = p[0, 0, -1] + G * s[0, 0, -1] * (theta[-1] - theta)
    with computation(PARALLEL), interval(...):
        exn = CP * (p / P_REF) ** (RD / CP)
    # Montgomery potential and height, from the lowest isentrope (the ground) upwards
    with computation(BACKWARD):
        with interval(-1, None):
            mtg = theta * exn + G * h_surface
            h = h_surface
        with interval(0, -1):
            mtg = mtg[0, 0, 1] + (theta - theta[1]) * exn[0, 0, 1]
            h = h[0, 0, 1] + RD / (CP * G) * 0.5 * (theta * exn + theta[1] * exn[0, 0, 1]) \
                * (p[0, 0, 1] - p) / (0.5 * (p[0, 0, 1] + p))


def numpy_diagnostics(theta, s, hs):
    p = np.empty(s.shape)
    p[:, :, 0] = P_TOP
    for k in range(1, NZ):
        p[:, :, k] = p[:, :, k - 1] + G * s[:, :, k - 1] * (theta[k - 1] - theta[k])
    exn = CP * (p / P_REF) ** (RD / CP)
    mtg, h = np.empty(s.shape), np.empty(s.shape)
    mtg[:, :, -1] = theta[-1] * exn[:, :, -1] + G * hs
    h[:, :, -1] = hs
    for k in range(NZ - 2, -1, -1):
        mtg[:, :, k] = mtg[:, :, k + 1] + (theta[k] - theta[k + 1]) * exn[:, :, k + 1]
        h[:, :, k] = h[:, :, k + 1] + RD / (CP * G) * 0.5 * (theta[k] * exn[:, :, k] + theta[k + 1] * exn[:, :, k + 1]) \
            * (p[:, :, k + 1] - p[:, :, k]) / (0.5 * (p[:, :, k + 1] + p[:, :, k]))
    return {"p": p, "exn": exn, "mtg": mtg, "h": h}


def run(backend):
    stencil = gtscript.stencil(backend=backend, definition=diagnostics,
                               externals={"CP": CP, "G": G, "P_REF": P_REF, "RD": RD})
    rng = np.random.default_rng(3)
    theta = np.linspace(400.0, 280.0, NZ)
    s = rng.uniform(50.0, 150.0, (NX, NY, NZ))
    hs = rng.uniform(0.0, 2000.0, (NX, NY))
    out = {name: np.zeros((NX, NY, NZ)) for name in ("p", "exn", "mtg", "h")}
    stencil(theta, s, hs, **out, p_top=P_TOP, origin=(0, 0, 0), domain=(NX, NY, NZ))
    return out, numpy_diagnostics(theta, s, hs)
