"""Stencils and single-process references shared by the MPI test scripts (run under
mpiexec by tests/test_distributed.py)."""

import numpy as np

import gtscript
from gtscript import (BACKWARD, FORWARD, PARALLEL, Field, I, computation, horizontal, interval,
                      region)


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
