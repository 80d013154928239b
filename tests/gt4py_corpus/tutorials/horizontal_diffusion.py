"""The horizontal-diffusion tutorial: a fourth-order diffusion (the Laplacian of the
Laplacian) whose fluxes are limited: a flux that would steepen the field is set to zero."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

NX, NY, NZ = 16, 14, 5
HALO = 2


@gtscript.function
def laplacian(phi):
    return 4.0 * phi - (phi[1, 0, 0] + phi[-1, 0, 0] + phi[0, 1, 0] + phi[0, -1, 0])


@gtscript.function
def limited_flux_x(lap, phi):
    flux = lap[1, 0, 0] - lap
    return 0.0 if flux * (phi[1, 0, 0] - phi) > 0.0 else flux


@gtscript.function
def limited_flux_y(lap, phi):
    flux = lap[0, 1, 0] - lap
    return 0.0 if flux * (phi[0, 1, 0] - phi) > 0.0 else flux


def diffuse(in_field: Field[np.float64], out_field: Field[np.float64], coeff: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap = laplacian(in_field)
        flx = limited_flux_x(lap, in_field)
        fly = limited_flux_y(lap, in_field)
        out_field = in_field - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])


def numpy_diffuse(phi, coeff):
    """The same scheme in NumPy, on the interior (HALO points in from each side)."""
    lap = 4.0 * phi[1:-1, 1:-1] - (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2])
    core = phi[1:-1, 1:-1]
    flx = lap[1:, :] - lap[:-1, :]
    flx = np.where(flx * (core[1:, :] - core[:-1, :]) > 0.0, 0.0, flx)
    fly = lap[:, 1:] - lap[:, :-1]
    fly = np.where(fly * (core[:, 1:] - core[:, :-1]) > 0.0, 0.0, fly)
    out = phi.copy()
    out[2:-2, 2:-2] = (phi[2:-2, 2:-2] - coeff[2:-2, 2:-2]
                       * (flx[1:, 1:-1] - flx[:-1, 1:-1] + fly[1:-1, 1:] - fly[1:-1, :-1]))
    return out


def run(backend):
    stencil = gtscript.stencil(backend=backend, definition=diffuse)
    x, y = np.meshgrid(np.linspace(0.0, 1.0, NX), np.linspace(0.0, 1.0, NY), indexing="ij")
    bump = np.exp(-((x - 0.5) ** 2 + (y - 0.5) ** 2) / 0.05)
    rng = np.random.default_rng(2)
    phi = bump[:, :, None] * np.linspace(1.0, 2.0, NZ) + 0.01 * rng.standard_normal((NX, NY, NZ))
    coeff = np.full((NX, NY, NZ), 0.025)
    out = phi.copy()
    for _ in range(3):  # a few steps, ping-ponging two arrays
        stencil(phi, out, coeff, origin=(HALO, HALO, 0), domain=(NX - 2 * HALO, NY - 2 * HALO, NZ))
        phi, out = out, phi.copy()
    expected = bump[:, :, None] * np.linspace(1.0, 2.0, NZ) + 0.01 * np.random.default_rng(2).standard_normal((NX, NY, NZ))
    for _ in range(3):
        expected = numpy_diffuse(expected, coeff)
    return {"phi": phi}, {"phi": expected}
