"""Idiomatic NumPy versions of the benchmarked stencils.

These are the baselines `benchmarks/suite.py` times the gtscript stencils against (and checks
their results with). Every function writes into a preallocated output, like a stencil call,
and works on whole arrays: the compute domain is the largest one the stencil's halo allows.

Run this file to self-test the references (the Thomas solver against
`scipy.linalg.solve_banded`, when SciPy is installed, and the others against point-wise loops):

    python3 benchmarks/reference.py
"""

import numpy as np


def copy(inp, out):
    """out = inp everywhere."""
    np.copyto(out, inp)


def laplacian(inp, out):
    """5-point horizontal Laplacian on the interior; halo 1 in I and J."""
    out[1:-1, 1:-1, :] = (
        -4.0 * inp[1:-1, 1:-1, :]
        + inp[2:, 1:-1, :]
        + inp[:-2, 1:-1, :]
        + inp[1:-1, 2:, :]
        + inp[1:-1, :-2, :]
    )


def hdiff(inp, coeff, out):
    """Classic GT4Py horizontal diffusion with a flux limiter; halo 2 in I and J.

    Index bookkeeping: `lap[a, b]` is the point (a+1, b+1) of `inp`, `flx[a, b]` the point
    (a+1, b+2) and `fly[a, b]` the point (a+2, b+1).
    """
    lap = 4.0 * inp[1:-1, 1:-1, :] - (
        inp[2:, 1:-1, :] + inp[:-2, 1:-1, :] + inp[1:-1, 2:, :] + inp[1:-1, :-2, :]
    )
    flx = lap[1:, 1:-1, :] - lap[:-1, 1:-1, :]
    flx = np.where(flx * (inp[2:-1, 2:-2, :] - inp[1:-2, 2:-2, :]) > 0.0, 0.0, flx)
    fly = lap[1:-1, 1:, :] - lap[1:-1, :-1, :]
    fly = np.where(fly * (inp[2:-2, 2:-1, :] - inp[2:-2, 1:-2, :]) > 0.0, 0.0, fly)
    out[2:-2, 2:-2, :] = inp[2:-2, 2:-2, :] - coeff[2:-2, 2:-2, :] * (
        flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :]
    )


def thomas(a, b, c, d, x):
    """Solve one tridiagonal system per (i, j) column with the Thomas algorithm.

    Row k of a column reads  a[k] * x[k-1] + b[k] * x[k] + c[k] * x[k+1] = d[k]
    (a[0] and c[-1] are ignored). Vectorised over the horizontal plane, sequential in K.
    """
    nz = a.shape[2]
    cp = np.empty(a.shape[:2] + (nz,), dtype=a.dtype)
    dp = np.empty_like(cp)
    cp[:, :, 0] = c[:, :, 0] / b[:, :, 0]
    dp[:, :, 0] = d[:, :, 0] / b[:, :, 0]
    for k in range(1, nz):
        denom = b[:, :, k] - a[:, :, k] * cp[:, :, k - 1]
        cp[:, :, k] = c[:, :, k] / denom
        dp[:, :, k] = (d[:, :, k] - a[:, :, k] * dp[:, :, k - 1]) / denom
    x[:, :, nz - 1] = dp[:, :, nz - 1]
    for k in range(nz - 2, -1, -1):
        x[:, :, k] = dp[:, :, k] - cp[:, :, k] * x[:, :, k + 1]


def advection(q, u, v, w, out, dtdx, dtdy, dtdz):
    """One upwind advection step of the tracer q; halo 1 in I and J.

    u and v are the velocities on the west and south faces of each cell; w >= 0 is a downward
    (K increasing) speed, treated implicitly in flux form (no inflow through the top). The
    result is clipped at zero. Index bookkeeping: `fx[a, b]` is the face west of the point
    (a+1, b+1) of q, `fy[a, b]` the face south of the point (a+1, b+1).
    """
    fx = u[1:, 1:-1, :] * np.where(u[1:, 1:-1, :] > 0.0, q[:-1, 1:-1, :], q[1:, 1:-1, :])
    fy = v[1:-1, 1:, :] * np.where(v[1:-1, 1:, :] > 0.0, q[1:-1, :-1, :], q[1:-1, 1:, :])
    qh = q[1:-1, 1:-1, :] - dtdx * (fx[1:] - fx[:-1]) - dtdy * (fy[:, 1:] - fy[:, :-1])
    cw = dtdz * w[1:-1, 1:-1, :]
    qn = np.empty_like(qh)
    qn[:, :, 0] = qh[:, :, 0] / (1.0 + cw[:, :, 0])
    for k in range(1, q.shape[2]):
        qn[:, :, k] = (qh[:, :, k] + cw[:, :, k - 1] * qn[:, :, k - 1]) / (1.0 + cw[:, :, k])
    np.maximum(qn, 0.0, out=out[1:-1, 1:-1, :])


def advection_state(rng, shape, dtype=np.float64):
    """A non-negative tracer q, face velocities u, v in [-1, 1] and a fall speed w in [0, 1],
    with time-step ratios (dtdx, dtdy, dtdz) that keep the explicit horizontal part stable."""
    q = rng.uniform(0.0, 1.0, shape).astype(dtype)
    u = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    v = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    w = rng.uniform(0.0, 1.0, shape).astype(dtype)
    return (q, u, v, w), (0.2, 0.2, 0.5)


def thomas_system(rng, shape, dtype=np.float64):
    """A well-conditioned (diagonally dominant) random system: returns a, b, c, d."""
    a = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    c = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    b = (rng.uniform(3.0, 4.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dtype)
    d = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    return a, b, c, d


def _self_test():
    rng = np.random.default_rng(0)
    shape = (9, 7, 6)
    inp = rng.standard_normal(shape)
    nx, ny, nz = shape

    out = np.zeros(shape)
    copy(inp, out)
    assert np.array_equal(out, inp)

    out = np.zeros(shape)
    laplacian(inp, out)
    for i in range(1, nx - 1):
        for j in range(1, ny - 1):
            expect = (-4.0 * inp[i, j] + inp[i + 1, j] + inp[i - 1, j]
                      + inp[i, j + 1] + inp[i, j - 1])
            np.testing.assert_allclose(out[i, j], expect, rtol=1e-14, atol=1e-14)
    assert not out[0].any() and not out[-1].any() and not out[:, 0].any() and not out[:, -1].any()

    coeff = rng.uniform(0.0, 0.2, shape)
    out = np.zeros(shape)
    hdiff(inp, coeff, out)

    def lap(i, j):
        return 4.0 * inp[i, j] - (inp[i + 1, j] + inp[i - 1, j] + inp[i, j + 1] + inp[i, j - 1])

    def flx(i, j):
        f = lap(i + 1, j) - lap(i, j)
        return np.where(f * (inp[i + 1, j] - inp[i, j]) > 0.0, 0.0, f)

    def fly(i, j):
        f = lap(i, j + 1) - lap(i, j)
        return np.where(f * (inp[i, j + 1] - inp[i, j]) > 0.0, 0.0, f)

    for i in range(2, nx - 2):
        for j in range(2, ny - 2):
            expect = inp[i, j] - coeff[i, j] * (flx(i, j) - flx(i - 1, j) + fly(i, j) - fly(i, j - 1))
            np.testing.assert_allclose(out[i, j], expect, rtol=1e-13, atol=1e-13)

    a, b, c, d = thomas_system(rng, shape)
    x = np.zeros(shape)
    thomas(a, b, c, d, x)
    try:
        from scipy.linalg import solve_banded
    except ImportError:  # check the residual instead
        solve_banded = None
    for i in range(nx):
        for j in range(ny):
            if solve_banded is not None:
                ab = np.zeros((3, nz))
                ab[0, 1:] = c[i, j, :-1]
                ab[1, :] = b[i, j, :]
                ab[2, :-1] = a[i, j, 1:]
                np.testing.assert_allclose(x[i, j], solve_banded((1, 1), ab, d[i, j]), rtol=1e-11, atol=1e-12)
            m = np.diag(b[i, j]) + np.diag(a[i, j, 1:], -1) + np.diag(c[i, j, :-1], 1)
            np.testing.assert_allclose(m @ x[i, j], d[i, j], rtol=1e-11, atol=1e-12)
    (q, u, v, w), (dtdx, dtdy, dtdz) = advection_state(rng, shape)
    out = np.zeros(shape)
    advection(q, u, v, w, out, dtdx, dtdy, dtdz)

    def flux(vel, q_up, q_here):
        return vel * (q_up if vel > 0.0 else q_here)

    for i in range(1, nx - 1):
        for j in range(1, ny - 1):
            prev = 0.0
            for k in range(nz):
                qh = (q[i, j, k]
                      - dtdx * (flux(u[i + 1, j, k], q[i, j, k], q[i + 1, j, k])
                                - flux(u[i, j, k], q[i - 1, j, k], q[i, j, k]))
                      - dtdy * (flux(v[i, j + 1, k], q[i, j, k], q[i, j + 1, k])
                                - flux(v[i, j, k], q[i, j - 1, k], q[i, j, k])))
                inflow = dtdz * w[i, j, k - 1] * prev if k > 0 else 0.0
                prev = (qh + inflow) / (1.0 + dtdz * w[i, j, k])
                np.testing.assert_allclose(out[i, j, k], max(prev, 0.0), rtol=1e-13, atol=1e-14)
    print("benchmarks/reference.py: all NumPy references agree with their point-wise definitions")


if __name__ == "__main__":
    _self_test()
