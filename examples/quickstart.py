"""gtscript quickstart: horizontal diffusion with a flux limiter.

Write the stencil once in GTScript, let gtscript JIT-compile it for this CPU, call it on
plain NumPy arrays, and compare with the same computation written in NumPy.

    python3 examples/quickstart.py
"""

import statistics
import time

import numpy as np

import gtscript
from gtscript import PARALLEL, Field, computation, interval

t0 = time.perf_counter()


@gtscript.stencil(backend="cpu")
def hdiff(inp: Field[np.float64], coeff: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap = 4.0 * inp[0, 0, 0] - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
        flx = lap[1, 0, 0] - lap[0, 0, 0]
        flx = 0.0 if flx * (inp[1, 0, 0] - inp[0, 0, 0]) > 0.0 else flx
        fly = lap[0, 1, 0] - lap[0, 0, 0]
        fly = 0.0 if fly * (inp[0, 1, 0] - inp[0, 0, 0]) > 0.0 else fly
        out = inp - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])


build_s = time.perf_counter() - t0


def hdiff_numpy(inp, coeff, out):
    """The same computation with NumPy slices (the stencil's halo is 2 points in I and J)."""
    lap = 4.0 * inp[1:-1, 1:-1] - (inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2])
    flx = lap[1:, 1:-1] - lap[:-1, 1:-1]
    flx = np.where(flx * (inp[2:-1, 2:-2] - inp[1:-2, 2:-2]) > 0.0, 0.0, flx)
    fly = lap[1:-1, 1:] - lap[1:-1, :-1]
    fly = np.where(fly * (inp[2:-2, 2:-1] - inp[2:-2, 1:-2]) > 0.0, 0.0, fly)
    out[2:-2, 2:-2] = inp[2:-2, 2:-2] - coeff[2:-2, 2:-2] * (flx[1:] - flx[:-1] + fly[:, 1:] - fly[:, :-1])


def median_ms(fn, repeat=10):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


nx, ny, nz = 256, 256, 64
rng = np.random.default_rng(0)
inp = rng.standard_normal((nx, ny, nz))
coeff = np.full((nx, ny, nz), 0.025)
out = np.zeros((nx, ny, nz))
out_np = np.zeros((nx, ny, nz))

# Without origin/domain the stencil runs on the largest domain its halo allows:
# origin (2, 2, 0), domain (nx - 4, ny - 4, nz) - the same points hdiff_numpy writes.
hdiff(inp, coeff, out)
hdiff_numpy(inp, coeff, out_np)
np.testing.assert_allclose(out, out_np, rtol=1e-12, atol=1e-12)

gt_ms = median_ms(lambda: hdiff(inp, coeff, out))
np_ms = median_ms(lambda: hdiff_numpy(inp, coeff, out_np))

print(f"horizontal diffusion on a {nx}x{ny}x{nz} float64 grid: results match NumPy")
print(f"  build (compile, or load from the cache): {1e3 * build_s:8.1f} ms")
print(f"  gtscript cpu run (median):               {gt_ms:8.2f} ms")
print(f"  NumPy run (median):                      {np_ms:8.2f} ms")
print(f"  speed-up over NumPy:                     {np_ms / gt_ms:8.1f}x")
