"""Time gtscript stencils against NumPy, Numba, hand-written C and a STREAM-style copy.

    .venv/bin/python benchmarks/run.py                      # 64x64x64 and 256x256x80, float64
    .venv/bin/python benchmarks/run.py --all --repeat 30 --json out.json --plot out.png
    .venv/bin/python benchmarks/run.py --sizes 128x128x80 --dtypes float32 --backend cpu numpy
    .venv/bin/python benchmarks/run.py --threads 1 --fortran --gt4py-compiled
    .venv/bin/python benchmarks/run.py --backend cuda --all --json gpu.json   # on a GPU (CuPy)

Every implementation's result is checked against the NumPy reference before it is timed.
The Markdown table printed on stdout can be pasted into docs/performance.md; progress goes
to stderr. Numba is optional (`pip install .[bench]`); without it its columns are skipped.
See benchmarks/suite.py for what is measured and how; `--backend cuda` runs the GPU suite of
benchmarks/cuda_suite.py instead (256x256x80 and 512x512x80 by default, CUDA-event timings
against the device's copy bandwidth and hand-written CuPy kernels; it needs CuPy and a GPU).
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report as formatting  # noqa: E402
import suite  # noqa: E402
from gtscript._bench import parse_size  # noqa: E402  (python -m gtscript bench's)

DTYPES = {"float64": np.float64, "float32": np.float32}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10,
                        help="timed calls per measurement, after a warm-up (default 10)")
    parser.add_argument("--max-seconds", type=float, default=3.0,
                        help="stop a measurement after this long, with at least 3 calls "
                             "(default 3; keeps slow NumPy baselines from dominating)")
    parser.add_argument("--sizes", type=parse_size, nargs="+", metavar="NXxNYxNZ",
                        help="grid sizes (default 64x64x64 256x256x80; --all adds 512x512x80)")
    parser.add_argument("--dtypes", nargs="+", choices=sorted(DTYPES),
                        help="element types (default float64; --all adds float32)")
    parser.add_argument("--all", action="store_true",
                        help="the full matrix: 64x64x64, 256x256x80, 512x512x80 in float64 and "
                             "float32 (explicit --sizes / --dtypes still win)")
    parser.add_argument("--stencils", nargs="+", choices=suite.STENCILS, default=suite.STENCILS)
    parser.add_argument("--backend", nargs="+", default=["cpu"], choices=["cpu", "numpy", "cuda"],
                        help="gtscript backends timed, the first one compared (default cpu); "
                             "cuda alone runs the GPU suite (benchmarks/cuda_suite.py)")
    parser.add_argument("--no-numba", action="store_true", help="leave out the Numba columns")
    parser.add_argument("--fortran", action="store_true",
                        help="also time the first backend on Fortran-ordered copies of the arrays "
                             "(column 'F-order'; the baselines take C order only)")
    parser.add_argument("--threads", type=int, default=0, metavar="N",
                        help="threads for gtscript, the C baselines (OpenMP) and Numba "
                             "(default: each one's own default, the usable cores)")
    parser.add_argument("--no-gt4py", action="store_true",
                        help="leave out the GT4Py columns (by default GT4Py's numpy backend is "
                             "timed when gt4py is installed)")
    parser.add_argument("--gt4py-compiled", action="store_true",
                        help="also time GT4Py's gt:cpu_ifirst, gt:cpu_kfirst and dace:cpu "
                             "backends, each on its preferred layout (they need g++ and the "
                             "boost headers; each build takes tens of seconds)")
    parser.add_argument("--no-c", action="store_true",
                        help="leave out the C columns and the STREAM measurement")
    parser.add_argument("--stream-mib", type=float, default=0.0,
                        help="MiB per STREAM array (default: 4x the last-level cache, >= 64)")
    parser.add_argument("--overhead-calls", type=int, default=100_000,
                        help="calls of the 8x8x8 call-overhead benchmark (0 skips it)")
    parser.add_argument("--json", metavar="FILE", help="also write the full results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="also write a PNG bar chart (GB/s)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.overhead_calls < 0:
        parser.error("--overhead-calls must not be negative")
    if args.threads < 0:
        parser.error("--threads must not be negative")
    if "cuda" in args.backend and len(args.backend) > 1:
        parser.error("--backend cuda runs the GPU suite on its own: give it alone")
    return args


def main_cuda(args):
    """--backend cuda: the GPU suite; exits 2 with the reason where there is no GPU."""
    import cuda_suite

    sizes = args.sizes or cuda_suite.DEFAULT_SIZES
    options = suite.Options(
        sizes=tuple(sizes),
        dtypes=tuple(DTYPES[d] for d in (args.dtypes or (
            ["float64", "float32"] if args.all else ["float64"]))),
        backends=("cuda",), repeat=args.repeat, stencils=tuple(args.stencils),
        overhead_calls=args.overhead_calls)
    try:
        report = cuda_suite.run(options)
    except cuda_suite.NoDevice as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    print(cuda_suite.summary(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nresults written to {args.json}", file=sys.stderr)


def main(argv=None):
    args = parse_args(argv)
    if args.backend == ["cuda"]:
        return main_cuda(args)
    if args.threads:
        # read when each runtime starts its threads: gtscript's pool at its first parallel
        # call, OpenMP when the C baselines load, Numba when it is imported (all later)
        for name in ("GTSCRIPT_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
            os.environ[name] = str(args.threads)
    options = suite.Options(
        sizes=tuple(args.sizes or (suite.ALL_SIZES if args.all else suite.DEFAULT_SIZES)),
        dtypes=tuple(DTYPES[d] for d in (args.dtypes or (
            ["float64", "float32"] if args.all else ["float64"]))),
        backends=tuple(dict.fromkeys(args.backend)), repeat=args.repeat,
        max_seconds=args.max_seconds, stencils=tuple(args.stencils), numba=not args.no_numba,
        c=not args.no_c, stream_mib=args.stream_mib, overhead_calls=args.overhead_calls,
        fortran=args.fortran, gt4py=not args.no_gt4py, gt4py_compiled=args.gt4py_compiled)
    report = suite.run(options)
    print(formatting.summary(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nresults written to {args.json}")
    if args.plot:
        formatting.plot(report, args.plot)
        print(f"chart written to {args.plot}")


if __name__ == "__main__":
    main()
