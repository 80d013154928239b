"""Time gtscript stencils against idiomatic NumPy (benchmarks/reference.py).

For each stencil (copy, laplacian, horizontal diffusion, Thomas vertical solver) this script
  1. builds it cold (`rebuild=True`, timing the decoration: parse, analysis, JIT compile),
  2. checks its result against the NumPy version on every grid size,
  3. reports the median wall time of `--repeat` calls of each (after one warm-up call).

    python3 benchmarks/run.py                        # 128x128x80 and 256x256x80, cpu backend
    python3 benchmarks/run.py --repeat 50 --sizes 64x64x80 --json results.json

Only NumPy and the standard library are needed (besides gtscript itself).
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

import gtscript  # noqa: E402
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, computation, interval  # noqa: E402

# ------------------------------------------------------------------------------ stencils


def copy_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


def laplacian_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = -4.0 * inp[0, 0, 0] + inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0]


def hdiff_defn(inp: Field[np.float64], coeff: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        lap = 4.0 * inp[0, 0, 0] - (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0])
        res = lap[1, 0, 0] - lap[0, 0, 0]
        flx = 0.0 if res * (inp[1, 0, 0] - inp[0, 0, 0]) > 0.0 else res
        res = lap[0, 1, 0] - lap[0, 0, 0]
        fly = 0.0 if res * (inp[0, 1, 0] - inp[0, 0, 0]) > 0.0 else res
        out = inp - coeff * (flx - flx[-1, 0, 0] + fly - fly[0, -1, 0])


def thomas_defn(
    a: Field[np.float64],
    b: Field[np.float64],
    c: Field[np.float64],
    d: Field[np.float64],
    x: Field[np.float64],
):
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


def _field_inputs(rng, shape, names):
    return {name: rng.standard_normal(shape) for name in names}


def _hdiff_inputs(rng, shape):
    return {"inp": rng.standard_normal(shape), "coeff": np.full(shape, 0.025)}


def _thomas_inputs(rng, shape):
    return dict(zip("abcd", reference.thomas_system(rng, shape)))


# name -> (definition, inputs(rng, shape) -> dict, output argument name, NumPy version)
BENCHMARKS = {
    "copy": (copy_defn, lambda rng, shape: _field_inputs(rng, shape, ["inp"]), "out", reference.copy),
    "laplacian": (laplacian_defn, lambda rng, shape: _field_inputs(rng, shape, ["inp"]), "out", reference.laplacian),
    "hdiff": (hdiff_defn, _hdiff_inputs, "out", reference.hdiff),
    "thomas": (thomas_defn, _thomas_inputs, "x", reference.thomas),
}

# ------------------------------------------------------------------------------- timing


def median_ms(fn, repeat):
    fn()  # warm-up (first-call costs, page faults)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def parse_size(text):
    try:
        size = tuple(int(n) for n in text.lower().split("x"))
    except ValueError:
        size = ()
    if len(size) != 3 or min(size) < 5:
        raise argparse.ArgumentTypeError(f"expected NXxNYxNZ with every size >= 5, got {text!r}")
    return size


def run(args):
    rng = np.random.default_rng(0)
    compile_ms = {}
    stencils = {}
    for name, (defn, _, _, _) in BENCHMARKS.items():
        start = time.perf_counter()
        stencils[name] = gtscript.stencil(args.backend, defn, rebuild=True)
        compile_ms[name] = 1e3 * (time.perf_counter() - start)

    results = []
    for size in args.sizes:
        for name, (_, make_inputs, out_name, numpy_fn) in BENCHMARKS.items():
            inputs = make_inputs(rng, size)
            gt_args = dict(inputs, **{out_name: np.zeros(size)})
            np_args = dict(inputs, **{out_name: np.zeros(size)})
            stencil = stencils[name]

            stencil(**gt_args)
            numpy_fn(**np_args)
            np.testing.assert_allclose(
                gt_args[out_name], np_args[out_name], rtol=1e-10, atol=1e-12,
                err_msg=f"{name} {size}: gtscript ({args.backend}) and NumPy disagree",
            )

            gt_ms = median_ms(lambda: stencil(**gt_args), args.repeat)
            np_ms = median_ms(lambda: numpy_fn(**np_args), args.repeat)
            results.append({
                "stencil": name,
                "size": "x".join(map(str, size)),
                "gtscript_ms": gt_ms,
                "numpy_ms": np_ms,
                "speedup": np_ms / gt_ms,
            })
    return compile_ms, results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="timed calls per measurement (default 10)")
    parser.add_argument("--sizes", type=parse_size, nargs="+", default=[(128, 128, 80), (256, 256, 80)],
                        metavar="NXxNYxNZ", help="grid sizes (default 128x128x80 256x256x80)")
    parser.add_argument("--backend", default="cpu", help="gtscript backend (default cpu)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to FILE as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    compile_ms, results = run(args)

    print(f"gtscript backend {args.backend!r} vs NumPy {np.__version__}, "
          f"median of {args.repeat} calls, float64\n")
    header = f"{'stencil':<10} {'size':>12} {'gtscript ms':>12} {'numpy ms':>10} {'speed-up':>9}"
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r['stencil']:<10} {r['size']:>12} {r['gtscript_ms']:>12.3f} {r['numpy_ms']:>10.3f} "
              f"{r['speedup']:>8.1f}x")
    print("\ncold build (rebuild=True, time of the decoration)")
    for name, ms in compile_ms.items():
        print(f"  {name:<10} {ms:9.1f} ms")

    if args.json:
        report = {
            "backend": args.backend,
            "repeat": args.repeat,
            "dtype": "float64",
            "numpy_version": np.__version__,
            "gtscript_version": getattr(gtscript, "__version__", None),
            "python_version": platform.python_version(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
            "compile_ms": compile_ms,
            "results": results,
        }
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nresults written to {args.json}")


if __name__ == "__main__":
    main()
