"""gtscript through GT4Py's API (``backend="gtscript:cpu"``, gtscript/gt4py.py) against gtscript
directly: build time (cold and cached) and call overhead, with GT4Py's own numpy and
``gt:cpu_kfirst`` backends beside them.

    .venv/bin/python benchmarks/gt4py_api.py [--repeat N] [--calls N] [--no-kfirst] [--threads N]
                                               [--json F]

- build, cold: ``rebuild=True`` (gtscript: the frontend, analysis and LLVM compilation; GT4Py:
  its frontend, code generation and, for gt:cpu_kfirst, the C++ compilation), median of
  ``--repeat`` builds (gt:cpu_kfirst: one build, it takes minutes);
- build, cached: the same call again in the same process (gtscript: its memory cache; GT4Py:
  its disk cache, checked and loaded), median of 10 * ``--repeat``;
- call overhead: an 8x8x8 float64 copy (``inp``, ``out``; origin and domain from the arrays),
  microseconds per call with ``validate_args`` on and off: batches of ``--calls / 10`` calls,
  the variants taking turns batch by batch, 10 * ``--repeat`` batches each, the median kept.
  ``run()`` is GT4Py's ``StencilObject.run`` with a per-field origin dict, as NDSL's
  FrozenStencil calls it (GT4Py's own run validates nothing; gtscript's does).

Targets (issue 25): through GT4Py's API a call costs at most 1 us more than calling gtscript
directly, and a cached build through the registry takes under 5 ms.

GT4Py's generated code goes to a temporary directory; gtscript uses a temporary cache too.
(No ``from __future__ import annotations`` here: the definition's annotations must be objects.)
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPE = (8, 8, 8)


def make_copy(ns):
    """The benchmark's definition, annotated with ``ns``'s Field (GT4Py's or gtscript's)."""
    Field = ns.Field
    from gtscript import PARALLEL, computation, interval

    def copy(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp

    return copy


def interleaved_call_us(variants: dict, calls: int, rounds: int) -> dict:
    """Microseconds per call of each variant, per batch: batches of ``calls // 10`` calls, the
    variants taking turns batch by batch (so that a change in the machine's load hits them
    alike), 10 batches per round."""
    per_batch = max(1, calls // 10)
    for fn in variants.values():  # warm-up: caches, first-call plans, allocators
        for _ in range(min(1000, per_batch)):
            fn()
    samples: dict = {key: [] for key in variants}
    for _ in range(10 * rounds):
        for key, fn in variants.items():
            start = time.perf_counter()
            for _ in range(per_batch):
                fn()
            samples[key].append((time.perf_counter() - start) / per_batch * 1e6)
    return samples


def build_times(build, repeat: int, cached_repeat: int, cold_ms=None) -> tuple[float, float]:
    """(cold, cached) milliseconds: medians of ``build(rebuild=True)`` and ``build()``
    (``cold_ms``: the cold builds already timed)."""
    cold = list(cold_ms or [])
    for _ in range(repeat - len(cold)):
        start = time.perf_counter()
        build(rebuild=True)
        cold.append((time.perf_counter() - start) * 1e3)
    build()
    cached = []
    for _ in range(cached_repeat):
        start = time.perf_counter()
        build()
        cached.append((time.perf_counter() - start) * 1e3)
    return statistics.median(cold), statistics.median(cached)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--no-kfirst", action="store_true",
                        help="leave out gt:cpu_kfirst (its build needs g++ and takes minutes)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of gtscript's pool and GT4Py's OpenMP (default 1: the "
                             "call overhead, without thread start-up on a busy machine)")
    args = parser.parse_args(argv)
    os.environ["GTSCRIPT_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(args.threads)
    if args.json:
        args.json = os.path.abspath(args.json)

    tmp = tempfile.mkdtemp(prefix="gtscript-gt4py-bench-")
    os.environ.setdefault("GTSCRIPT_CACHE_DIR", os.path.join(tmp, "gtscript"))
    os.environ["GT_CACHE_ROOT"] = os.path.join(tmp, "gt4py")
    cwd = os.getcwd()
    # GT4Py compiles gt:cpu_kfirst with setuptools in the current directory, which must not
    # be a project's root (setuptools would read its pyproject.toml)
    os.chdir(tmp)
    try:
        return run(args)
    finally:
        os.chdir(cwd)
        shutil.rmtree(tmp, ignore_errors=True)


def run(args) -> int:
    warnings.simplefilter("ignore")  # GT4Py's note about DaCe, experimental features
    from gt4py.cartesian import config as gt_config
    from gt4py.cartesian import gtscript as gt4py_gtscript

    import gtscript
    import gtscript.gt4py  # noqa: F401  (registers gtscript:cpu)

    gt_config.cache_settings["root_path"] = os.environ["GT_CACHE_ROOT"]
    ours = make_copy(gtscript)
    theirs = make_copy(gt4py_gtscript)
    cached_repeat = 10 * args.repeat

    builders = {
        "gtscript.stencil('cpu')": lambda rebuild=False: gtscript.stencil(
            "cpu", ours, rebuild=rebuild),
        "GT4Py API, gtscript:cpu": lambda rebuild=False: gt4py_gtscript.stencil(
            backend="gtscript:cpu", definition=ours, rebuild=rebuild),
        "GT4Py API, numpy": lambda rebuild=False: gt4py_gtscript.stencil(
            backend="numpy", definition=theirs, rebuild=rebuild),
    }
    kfirst_error, kfirst_cold = None, []
    if not args.no_kfirst:
        def kfirst(rebuild=False):
            return gt4py_gtscript.stencil(backend="gt:cpu_kfirst", definition=theirs,
                                          rebuild=rebuild)
        try:
            start = time.perf_counter()
            kfirst(rebuild=True)
            kfirst_cold.append((time.perf_counter() - start) * 1e3)
            builders["GT4Py API, gt:cpu_kfirst"] = kfirst
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported: what is missing
            kfirst_error = f"{type(exc).__name__}: {str(exc)[-300:]}"

    results: dict = {"shape": list(SHAPE), "calls": args.calls, "repeat": args.repeat,
                     "build": {}, "call": {}, "kfirst_error": kfirst_error}
    for label, build in builders.items():
        kf = "kfirst" in label  # one cold build: it takes minutes
        cold, cached = build_times(build, 1 if kf else args.repeat, cached_repeat,
                                   kfirst_cold if kf else None)
        results["build"][label] = {"cold_ms": cold, "cached_ms": cached}

    # ---- call overhead
    rng = np.random.default_rng(1)
    inp, out = rng.standard_normal(SHAPE), np.zeros(SHAPE)
    direct = gtscript.stencil("cpu", ours)
    through = gt4py_gtscript.stencil(backend="gtscript:cpu", definition=ours)
    stencils = {"gtscript.stencil('cpu')": direct, "GT4Py API, gtscript:cpu": through,
                "GT4Py API, numpy": builders["GT4Py API, numpy"]()}
    if "GT4Py API, gt:cpu_kfirst" in builders:
        stencils["GT4Py API, gt:cpu_kfirst"] = builders["GT4Py API, gt:cpu_kfirst"]()
    origin = {"inp": (0, 0, 0), "out": (0, 0, 0)}
    variants = {}
    for label, st in stencils.items():
        for validate in (True, False):
            variants[(label, f"__call__, validate_args={validate}")] = (
                lambda st=st, v=validate: st(inp, out, validate_args=v))
        if label != "gtscript.stencil('cpu')":
            variants[(label, "run()")] = (lambda st=st: st.run(
                inp=inp, out=out, _domain_=SHAPE, _origin_=origin, exec_info=None))
    for fn in variants.values():  # every variant computes the copy
        out[...] = 0.0
        fn()
        np.testing.assert_array_equal(out, inp)
    samples = interleaved_call_us(variants, args.calls, args.repeat)
    for (label, how), us in samples.items():
        results["call"].setdefault(label, {})[how] = statistics.median(us)
    # the target's measure: GT4Py's API minus gtscript directly, batch by batch (adjacent
    # batches see the same load), the median of the differences
    results["delta_us"] = {
        how: statistics.median(b - a for a, b in zip(
            samples[("gtscript.stencil('cpu')", how)], samples[("GT4Py API, gtscript:cpu", how)]))
        for how in ("__call__, validate_args=True", "__call__, validate_args=False")}

    print(report(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def report(results: dict) -> str:
    lines = ["Build time (ms, median): cold = rebuild=True, cached = the same call again",
             "", "| build | cold ms | cached ms |", "|---|---:|---:|"]
    for label, times in results["build"].items():
        lines.append(f"| {label} | {times['cold_ms']:.1f} | {times['cached_ms']:.3f} |")
    if results["kfirst_error"]:
        lines.append(f"\ngt:cpu_kfirst did not build here: {results['kfirst_error']}")
    shape = "x".join(map(str, results["shape"]))
    lines += ["", f"Call overhead, {shape} float64 copy (us per call, median)", "",
              "| stencil | validate_args=True | validate_args=False | run() |",
              "|---|---:|---:|---:|"]
    for label, times in results["call"].items():
        cells = [times.get(f"__call__, validate_args={v}") for v in (True, False)]
        cells.append(times.get("run()"))
        lines.append(f"| {label} | " + " | ".join("-" if c is None else f"{c:.2f}"
                                                  for c in cells) + " |")
    deltas = results.get("delta_us")
    if deltas:
        lines.append("\nGT4Py API minus gtscript directly (median of batch-by-batch "
                     "differences): " + ", ".join(f"{d:+.2f} us" for d in deltas.values())
                     + " (validate_args True, False; target: at most +1 us)")
    cached = results["build"].get("GT4Py API, gtscript:cpu", {}).get("cached_ms")
    if cached is not None:
        lines.append(f"cached build through the registry: {cached:.3f} ms (target: under 5 ms)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
