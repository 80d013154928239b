"""The Burgers tutorial: the 2-D viscous Burgers equations for (u, v), first-order upwind
advection and centred diffusion, forward Euler in a time loop with periodic boundaries."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

NX, NY, NZ = 20, 18, 1
DX, DY, DT, MU = 1.0 / NX, 1.0 / NY, 1.0e-3, 0.05
STEPS = 10


@gtscript.function
def advection(f, u, v, dx, dy):
    adv_x = u * (f - f[-1, 0, 0]) / dx if u > 0.0 else u * (f[1, 0, 0] - f) / dx
    adv_y = v * (f - f[0, -1, 0]) / dy if v > 0.0 else v * (f[0, 1, 0] - f) / dy
    return adv_x + adv_y


@gtscript.function
def diffusion(f, dx, dy):
    return (f[1, 0, 0] - 2.0 * f + f[-1, 0, 0]) / (dx * dx) + (f[0, 1, 0] - 2.0 * f + f[0, -1, 0]) / (dy * dy)


def burgers_step(u_now: Field[np.float64], v_now: Field[np.float64], u_new: Field[np.float64],
                 v_new: Field[np.float64], *, dt: float, dx: float, dy: float, mu: float):
    with computation(PARALLEL), interval(...):
        u_new = u_now + dt * (mu * diffusion(u_now, dx, dy) - advection(u_now, u_now, v_now, dx, dy))
        v_new = v_now + dt * (mu * diffusion(v_now, dx, dy) - advection(v_now, u_now, v_now, dx, dy))


def periodic(f):
    f[0, :] = f[-2, :]
    f[-1, :] = f[1, :]
    f[:, 0] = f[:, -2]
    f[:, -1] = f[:, 1]


def initial():
    x, y = np.meshgrid(np.linspace(0.0, 1.0, NX), np.linspace(0.0, 1.0, NY), indexing="ij")
    u = np.sin(2.0 * np.pi * x) * np.cos(2.0 * np.pi * y)
    v = 0.5 * np.cos(2.0 * np.pi * x) * np.sin(2.0 * np.pi * y)
    return u[:, :, None].copy(), v[:, :, None].copy()


def numpy_step(u, v):
    def upwind(f):
        c = f[1:-1, 1:-1]
        ax = np.where(u[1:-1, 1:-1] > 0.0, u[1:-1, 1:-1] * (c - f[:-2, 1:-1]) / DX, u[1:-1, 1:-1] * (f[2:, 1:-1] - c) / DX)
        ay = np.where(v[1:-1, 1:-1] > 0.0, v[1:-1, 1:-1] * (c - f[1:-1, :-2]) / DY, v[1:-1, 1:-1] * (f[1:-1, 2:] - c) / DY)
        return ax + ay

    def lap(f):
        c = f[1:-1, 1:-1]
        return (f[2:, 1:-1] - 2.0 * c + f[:-2, 1:-1]) / (DX * DX) + (f[1:-1, 2:] - 2.0 * c + f[1:-1, :-2]) / (DY * DY)

    un, vn = u.copy(), v.copy()
    un[1:-1, 1:-1] = u[1:-1, 1:-1] + DT * (MU * lap(u) - upwind(u))
    vn[1:-1, 1:-1] = v[1:-1, 1:-1] + DT * (MU * lap(v) - upwind(v))
    return un, vn


def run(backend, in_place=False):
    step = gtscript.stencil(backend=backend, definition=burgers_step)
    u, v = initial()
    u_new, v_new = u.copy(), v.copy()
    for _ in range(STEPS):
        if in_place:  # the new values overwrite the old ones that neighbours still read
            step(u, v, u, v, dt=DT, dx=DX, dy=DY, mu=MU, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))
        else:
            step(u, v, u_new, v_new, dt=DT, dx=DX, dy=DY, mu=MU, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))
            u, u_new = u_new, u
            v, v_new = v_new, v
        periodic(u)
        periodic(v)

    eu, ev = initial()
    for _ in range(STEPS):
        eu, ev = numpy_step(eu, ev)
        periodic(eu)
        periodic(ev)
    return {"u": u, "v": v}, {"u": eu, "v": ev}
