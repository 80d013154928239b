"""Examples in the manner of GT4Py's GTScript language reference: computations and intervals,
iteration policies, temporaries, conditionals, functions, externals, regions, lower-dimensional
and vector fields, each checked against NumPy."""

import numpy as np

from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    BACKWARD,
    FORWARD,
    IJ,
    PARALLEL,
    Field,
    I,
    J,
    K,
    __INLINED,
    computation,
    horizontal,
    interval,
    region,
)

NX, NY, NZ = 9, 8, 6


@gtscript.function
def centred(f):
    return 0.5 * (f[1, 0, 0] - f[-1, 0, 0]), 0.5 * (f[0, 1, 0] - f[0, -1, 0])


def column_sums(a: Field[np.float64], up: Field[np.float64], down: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            up = a
        with interval(1, None):
            up = up[0, 0, -1] + a
    with computation(BACKWARD):
        with interval(-1, None):
            down = a
        with interval(0, -1):
            down = down[0, 0, 1] + a


def gradient_norm(a: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SQUARED

    with computation(PARALLEL), interval(...):
        gx, gy = centred(a)
        if __INLINED(SQUARED):
            out = gx * gx + gy * gy
        else:
            out = sqrt(gx * gx + gy * gy)


def classify(a: Field[np.float64], out: Field[np.int32]):
    with computation(PARALLEL), interval(...):
        if a < -0.5:
            out = -1
        elif a > 0.5:
            out = 1
        else:
            out = 0


def boundaries(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a
        with horizontal(region[I[0], :], region[I[-1], :]):
            out = 0.0
        with horizontal(region[:, J[0]]):
            out = 1.0


def profile_and_surface(a: Field[np.float64], surface: Field[IJ, np.float64], profile: Field[K, np.float64],
                        wind: Field[(np.float64, (2,))], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = a * surface + profile + wind[0, 0, 0][0] * wind[0, 0, 0][1]


def run(backend):
    rng = np.random.default_rng(4)
    a = rng.uniform(-1.0, 1.0, (NX, NY, NZ))
    got, want = {}, {}

    sums = gtscript.stencil(backend=backend, definition=column_sums)
    up, down = np.zeros_like(a), np.zeros_like(a)
    sums(a, up, down, origin=(0, 0, 0), domain=(NX, NY, NZ))
    got.update(up=up, down=down)
    want.update(up=np.cumsum(a, axis=2), down=np.cumsum(a[:, :, ::-1], axis=2)[:, :, ::-1])

    for squared in (True, False):
        norm = gtscript.stencil(backend=backend, definition=gradient_norm, externals={"SQUARED": squared})
        out = np.zeros_like(a)
        norm(a, out, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))
        gx = 0.5 * (a[2:, 1:-1] - a[:-2, 1:-1])
        gy = 0.5 * (a[1:-1, 2:] - a[1:-1, :-2])
        expected = np.zeros_like(a)
        expected[1:-1, 1:-1] = gx * gx + gy * gy if squared else np.sqrt(gx * gx + gy * gy)
        got[f"norm_{squared}"], want[f"norm_{squared}"] = out, expected

    kind = np.zeros(a.shape, np.int32)
    gtscript.stencil(backend=backend, definition=classify)(a, kind, origin=(0, 0, 0), domain=(NX, NY, NZ))
    got["kind"], want["kind"] = kind, np.where(a < -0.5, -1, np.where(a > 0.5, 1, 0)).astype(np.int32)

    walls = np.zeros_like(a)
    gtscript.stencil(backend=backend, definition=boundaries)(a, walls, origin=(1, 1, 0), domain=(NX - 2, NY - 2, NZ))
    expected = np.zeros_like(a)
    expected[1:-1, 1:-1] = a[1:-1, 1:-1]
    expected[1, 1:-1] = expected[-2, 1:-1] = 0.0
    expected[1:-1, 1] = 1.0
    got["walls"], want["walls"] = walls, expected

    surface, profile = rng.uniform(size=(NX, NY)), rng.uniform(size=NZ)
    wind = rng.uniform(size=(NX, NY, NZ, 2))
    mixed = np.zeros_like(a)
    gtscript.stencil(backend=backend, definition=profile_and_surface)(
        a, surface, profile, wind, mixed, origin=(0, 0, 0), domain=(NX, NY, NZ))
    got["mixed"] = mixed
    want["mixed"] = a * surface[:, :, None] + profile + wind[..., 0] * wind[..., 1]
    return got, want
