"""The built-in benchmark: ``python -m gtscript bench`` where the checkout's
``benchmarks/run.py`` is absent (an installed gtscript).

A few stencils (a copy, a Laplacian, horizontal diffusion with a flux limiter, a vertical
running sum) timed against the same computation written in NumPy, after checking that both
give the same result. The full suite (Numba, C and STREAM baselines, GT4Py, the GPU, plots)
comes with a source checkout: ``python -m gtscript bench`` there runs benchmarks/run.py.

    python -m gtscript._bench [--sizes NXxNYxNZ ...] [--repeat N] [--backend B ...]
                              [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Callable

import numpy as np

import gtscript
from gtscript import FORWARD, PARALLEL, Field, computation, interval

F64 = Field[np.float64]


def copy_defn(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = inp


def laplacian_defn(inp: F64, out: F64):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def hdiff_defn(inp: F64, out: F64, *, coeff: float):
    with computation(PARALLEL), interval(...):
        lap = -4.0 * inp + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]
        res = lap[1, 0, 0] - lap
        flx = 0.0 if res * (inp[1, 0, 0] - inp) > 0.0 else res
        res = lap[0, 1, 0] - lap
        fly = 0.0 if res * (inp[0, 1, 0] - inp) > 0.0 else res
        out = inp - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])  # type: ignore[index]


def column_sum_defn(inp: F64, out: F64):
    with computation(FORWARD):
        with interval(0, 1):
            out = inp
        with interval(1, None):
            out = out[0, 0, -1] + inp


def copy_numpy(inp, out):
    out[...] = inp


def laplacian_numpy(inp, out):
    out[1:-1, 1:-1] = (-4.0 * inp[1:-1, 1:-1] + inp[2:, 1:-1] + inp[:-2, 1:-1]
                       + inp[1:-1, 2:] + inp[1:-1, :-2])


def hdiff_numpy(inp, out, *, coeff):
    lap = -4.0 * inp[1:-1, 1:-1] + inp[2:, 1:-1] + inp[:-2, 1:-1] + inp[1:-1, 2:] + inp[1:-1, :-2]
    c = inp[1:-1, 1:-1]  # lap's points: the array's interior
    res = lap[1:, :] - lap[:-1, :]  # flx at i + 1/2, for i in 1 .. nx-3
    flx = np.where(res * (c[1:, :] - c[:-1, :]) > 0.0, 0.0, res)
    res = lap[:, 1:] - lap[:, :-1]
    fly = np.where(res * (c[:, 1:] - c[:, :-1]) > 0.0, 0.0, res)
    out[2:-2, 2:-2] = inp[2:-2, 2:-2] - coeff * (flx[1:, 1:-1] - flx[:-1, 1:-1]
                                                 + fly[1:-1, 1:] - fly[1:-1, :-1])


def column_sum_numpy(inp, out):
    np.cumsum(inp, axis=2, out=out)


#: name: (definition, NumPy version, scalar keywords, arrays moved per point)
STENCILS: dict[str, tuple[Callable[..., Any], Callable[..., Any], dict, int]] = {
    "copy": (copy_defn, copy_numpy, {}, 2),
    "laplacian": (laplacian_defn, laplacian_numpy, {}, 2),
    "hdiff": (hdiff_defn, hdiff_numpy, {"coeff": 0.025}, 2),
    "column_sum": (column_sum_defn, column_sum_numpy, {}, 2),
}


def parse_size(text: str) -> tuple:
    try:
        size = tuple(int(n) for n in text.lower().split("x"))
    except ValueError:
        size = ()
    if len(size) != 3 or min(size) < 5:
        raise argparse.ArgumentTypeError(f"expected NXxNYxNZ with every size >= 5, got {text!r}")
    return size


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m gtscript bench",
        description="gtscript's built-in benchmark (the checkout's benchmarks/run.py, with "
                    "Numba, C, STREAM and GT4Py, is not installed): a few stencils against "
                    "the same computation in NumPy.")
    parser.add_argument("--sizes", type=parse_size, nargs="+", metavar="NXxNYxNZ",
                        default=[(128, 128, 64)], help="grid sizes (default 128x128x64)")
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed calls per measurement, after a warm-up (default 10)")
    parser.add_argument("--backend", nargs="+", default=["cpu"], choices=["cpu", "numpy"],
                        help="gtscript backends timed (default cpu)")
    parser.add_argument("--stencils", nargs="+", choices=list(STENCILS), default=list(STENCILS))
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.error(f"{' '.join(unknown)}: not an option of the built-in benchmark (the full "
                     f"suite's options need a source checkout, where `python -m gtscript "
                     f"bench` runs benchmarks/run.py)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def best_time(call, repeat: int) -> float:
    """The fastest of ``repeat`` calls after one warm-up, in seconds."""
    call()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, backend: str, size: tuple, repeat: int) -> dict:
    definition, reference, scalars, arrays = STENCILS[name]
    stencil = gtscript.stencil(backend, definition)
    rng = np.random.default_rng(0)
    inp = rng.standard_normal(size)
    out, expected = np.zeros(size), np.zeros(size)
    seconds = best_time(lambda: stencil(inp, out, **scalars), repeat)
    numpy_seconds = best_time(lambda: reference(inp, expected, **scalars), repeat)
    (lo_i, hi_i), (lo_j, hi_j), _ = stencil.halo
    inner = (slice(lo_i, size[0] - hi_i), slice(lo_j, size[1] - hi_j))
    if not np.allclose(out[inner], expected[inner]):
        raise AssertionError(f"{name}: gtscript's {backend} backend and NumPy disagree")
    points = (size[0] - lo_i - hi_i) * (size[1] - lo_j - hi_j) * size[2]
    return {"stencil": name, "backend": backend, "size": list(size), "seconds": seconds,
            "numpy_seconds": numpy_seconds, "speedup": numpy_seconds / seconds,
            "gb_per_s": arrays * 8 * points / seconds / 1e9}


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    results = []
    print(f"gtscript {gtscript.__version__} built-in benchmark ({gtscript.get_num_threads()} "
          f"threads, float64; the full suite comes with a source checkout)")
    print(f"{'stencil':<11} {'backend':<7} {'size':<12} {'gtscript ms':>11} {'NumPy ms':>9} "
          f"{'speed-up':>8} {'GB/s':>6}")
    for size in args.sizes:
        for name in args.stencils:
            for backend in args.backend:
                print(f"bench: {name} {backend} {'x'.join(map(str, size))}", file=sys.stderr,
                      flush=True)
                r = measure(name, backend, size, args.repeat)
                results.append(r)
                print(f"{name:<11} {backend:<7} {'x'.join(map(str, size)):<12} "
                      f"{1e3 * r['seconds']:>11.3f} {1e3 * r['numpy_seconds']:>9.3f} "
                      f"{r['speedup']:>8.1f} {r['gb_per_s']:>6.1f}", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"gtscript": gtscript.__version__, "suite": "built-in",
                       "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
