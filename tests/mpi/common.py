"""Stencils and single-process references shared by the MPI test scripts (run under
mpiexec by tests/distributed/test_distributed.py)."""

import numpy as np

import gtscript
from gtscript import (BACKWARD, FORWARD, PARALLEL, Field, I, J, computation, horizontal,
                      interval, region)


def hdiff_def(inp: Field["T"], out: Field["T"], alpha: "T"):  # noqa: F821
    with computation(PARALLEL), interval(...):
        lap = 4.0 * inp - inp[-1, 0, 0] - inp[1, 0, 0] - inp[0, -1, 0] - inp[0, 1, 0]
        out = inp - alpha * (4.0 * lap - lap[-1, 0, 0] - lap[1, 0, 0] - lap[0, -1, 0]
                             - lap[0, 1, 0])


def lap_def(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp + 0.1 * (inp[-1, 0, 0] + inp[1, 0, 0] + inp[0, -1, 0] + inp[0, 1, 0]
                           - 4.0 * inp + 0.5 * (inp[1, 1, 0] - inp[-1, -1, 0]))


def tridiag_def(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64],
                d: Field[np.float64], x: Field[np.float64]):
    with computation(FORWARD):
        with interval(0, 1):
            cp = c / b
            dp = d / b
        with interval(1, None):
            m = b - a * cp[0, 0, -1]
            cp = c / m
            dp = (d - a * dp[0, 0, -1]) / m
    with computation(BACKWARD):
        with interval(-1, None):
            x = dp
        with interval(0, -1):
            x = dp - cp * x[0, 0, 1]


def build(definition, backend="cpu", dtype=np.float64, builder=gtscript.stencil):
    return builder(backend, definition, dtypes={"T": dtype})


def periodic_fill(g, h):
    """Wrap the halo of a global array (with halo h) around in I and J, corners included."""
    ni, nj = g.shape[0] - 2 * h, g.shape[1] - 2 * h
    core = g[h:h + ni, h:h + nj].copy()
    ii = (np.arange(-h, ni + h)) % ni
    jj = (np.arange(-h, nj + h)) % nj
    g[...] = core[ii][:, jj]


def hand_laplacian(g, h):
    """lap_def in NumPy on the interior of g (halo h >= 1)."""
    ni, nj = g.shape[0] - 2 * h, g.shape[1] - 2 * h

    def s(di, dj):
        return g[h + di:h + di + ni, h + dj:h + dj + nj]

    return s(0, 0) + 0.1 * (s(-1, 0) + s(1, 0) + s(0, -1) + s(0, 1) - 4.0 * s(0, 0)
                            + 0.5 * (s(1, 1) - s(-1, -1)))


def edge_def(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp[1, 0, 0]
        with horizontal(region[I[0], :]):
            out = 0.0


def count_def(inp: Field[np.float64], out: Field[np.float64]):
    """Adds 1 to every point it computes (inp is zero): a point computed twice shows 2."""
    with computation(PARALLEL), interval(...):
        out = out + 1.0 + inp[1, 0, 0] * inp[0, -2, 0] * inp[-1, 1, 0]


def walls_def(inp: Field["T"], out: Field["T"]):  # noqa: F821
    """Diffusion with boundary conditions on the global grid's edges and corners."""
    with computation(PARALLEL), interval(...):
        out = inp + 0.1 * (inp[-1, 0, 0] + inp[1, 0, 0] + inp[0, -1, 0] + inp[0, 1, 0]
                           - 4.0 * inp)
        with horizontal(region[I[0], :]):
            out = inp[1, 0, 0]
        with horizontal(region[I[-1], :]):
            out = 0.5 * inp[-1, 0, 0]
        with horizontal(region[:, J[0]]):
            out = inp[0, 1, 0] + 0.25
        with horizontal(region[:, J[-1]]):
            out = out - inp[0, -1, 0]
        with horizontal(region[I[0], J[0]], region[I[-1], J[-1]]):
            out = 1.0
        with horizontal(region[I[1]:I[3], J[-2]:]):
            out = 0.5 * out + inp[-1, 1, 0]
        with horizontal(region[I[-2]:, J[1]:J[-1]]):
            out = out + 0.01 * inp[1, -1, 0]


def hand_walls(g, h):
    """walls_def in NumPy on the interior of g (halo h >= 1), the regions on its edges."""
    ni, nj = g.shape[0] - 2 * h, g.shape[1] - 2 * h

    def s(di, dj):
        return g[h + di:h + di + ni, h + dj:h + dj + nj]

    out = s(0, 0) + 0.1 * (s(-1, 0) + s(1, 0) + s(0, -1) + s(0, 1) - 4.0 * s(0, 0))
    out[0] = s(1, 0)[0]
    out[-1] = (0.5 * s(-1, 0))[-1]
    out[:, 0] = (s(0, 1) + 0.25)[:, 0]
    out[:, -1] = out[:, -1] - s(0, -1)[:, -1]
    out[0, 0] = out[-1, -1] = 1.0
    out[1:3, nj - 2:] = 0.5 * out[1:3, nj - 2:] + s(-1, 1)[1:3, nj - 2:]
    out[ni - 2:, 1:nj - 1] = out[ni - 2:, 1:nj - 1] + 0.01 * s(1, -1)[ni - 2:, 1:nj - 1]
    return out


def cut_region_def(a: Field[np.float64], out: Field[np.float64]):
    """region[I[1]:] reads a temporary one point left: computed from the grid's second
    column on, which a rank whose part starts further right would need before its own."""
    with computation(PARALLEL), interval(...):
        t = a * 2.0
        with horizontal(region[I[-1], :]):
            t = 0.0  # two writers: t stays a temporary
        out = a
        with horizontal(region[I[1]:, :]):
            out = t[-1, 0, 0]


def one_sided_def(inp: Field[np.float64], out: Field[np.float64]):
    """Regions reading one-sided (I[0] reads to the right, I[-1] to the left): the halo
    widths differ per side, and per rank."""
    with computation(PARALLEL), interval(...):
        out = inp[-1, 0, 0] + inp[0, 1, 0]
        with horizontal(region[I[0], :]):
            out = inp[1, 0, 0]
        with horizontal(region[I[-1], :]):
            out = 3.0 * inp[-1, 0, 0]
