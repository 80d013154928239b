"""Every stencil of the test suite (tests/cuda_emulation/registry.py) on the cuda backend on a
real GPU, on NumPy arrays and on CuPy arrays, against the reference backend (cpu, or numpy in a
core built without LLVM): which cases disagree, and by how much.

    python benchmarks/gpu/check_registry.py --md registry.md --json registry.json

A case passes when every array the call may write matches the reference within the tolerance
of tests/backends/cuda/test_cuda_gpu.py (float64 1e-11, float32 1e-5, integers exactly), and a call the
reference rejects is rejected by the cuda backend with the same exception type. Exits 1 when a
case fails, 2 when there is no GPU.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import signal
import sys
import time
import traceback
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import gtscript  # noqa: E402
from cuda_emulation.registry import MODULES, REFERENCE, cases, status  # noqa: E402

TOL = {np.dtype(np.float64): 1e-11, np.dtype(np.float32): 1e-5}


def compare(got, want):
    """(ok, max abs difference, max relative difference) of two arrays."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, float("inf"), float("inf")
    if want.dtype.kind != "f":
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64)) if want.dtype.kind != "b" \
            else (got != want).astype(np.float64)
        worst = float(diff.max()) if diff.size else 0.0
        return worst == 0.0, worst, worst
    same_nan = np.isnan(got) == np.isnan(want)
    # equal values differ by 0, infinities of one sign included (inf - inf would be nan)
    g, w = got.astype(np.float64), want.astype(np.float64)
    tol = TOL[want.dtype]
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where((g == w) | (np.isnan(g) & np.isnan(w)), 0.0, np.abs(g - w))
        diff = np.where(np.isnan(diff), np.inf, diff)  # a nan against a number
        ok = bool(same_nan.all() and ((diff == 0) | (np.isfinite(diff) & (diff <= tol + tol * np.abs(w)))).all())
        rel = np.where(diff == 0, 0.0, diff / np.maximum(np.abs(w), np.finfo(want.dtype).tiny))
    worst = float(diff.max()) if diff.size else 0.0
    return ok, worst, float(rel.max()) if diff.size else 0.0


EMULATE = False  # --emulate: the cuda stencils run on the host emulation (checks this script)


def build_cuda(case):
    if not EMULATE:
        return case.build("cuda")
    from cuda_emulation.runner import emulate
    return emulate(case.build("cuda", gpu_arch="sm_90"))


def run_case(case, arrays, cupy):
    """One case on one kind of arrays: a dict for the report."""
    ref_st = case.build(REFERENCE)
    gpu = build_cuda(case)
    args = case.inputs(ref_st, np.random.default_rng(11))
    ref = copy.deepcopy(args)
    try:
        ref_st(**ref)
    except (ValueError, TypeError) as e:
        ref_error = type(e)
    else:
        ref_error = None
    out = {k: (cupy.asarray(v) if arrays == "cupy" and isinstance(v, np.ndarray) else copy.deepcopy(v))
           for k, v in args.items()}
    start = time.perf_counter()
    try:
        gpu(**out)
    except Exception as e:  # noqa: BLE001 - reported, whatever it is
        if ref_error is not None and isinstance(e, ref_error):
            return {"result": "pass", "note": f"both reject: {type(e).__name__}"}
        return {"result": "fail", "error": f"{type(e).__name__}: {e}"[:2000]}
    seconds = time.perf_counter() - start
    if ref_error is not None:
        return {"result": "fail", "error": f"the {REFERENCE} backend raised {ref_error.__name__}, cuda did not"}
    fields, ok_all = {}, True
    for k, v in ref.items():
        if isinstance(v, np.ndarray):
            got = cupy.asnumpy(out[k]) if arrays == "cupy" else out[k]
            ok, worst, rel = compare(got, v)
            ok_all &= ok
            fields[k] = {"ok": ok, "max_abs": worst, "max_rel": rel}
    return {"result": "pass" if ok_all else "fail", "fields": fields, "call_s": seconds}


class CutShort(BaseException):
    """SIGTERM arrived (the caller's time limit)."""


def _cut_short(signum, frame):
    raise CutShort


def _run_cases(args, kinds, cupy, results, counts):
    for case in cases():
        if args.k not in case.name:
            continue
        st = status(case)[0]
        row = {"case": case.name, "status": st}
        if st == "ok":
            for kind in kinds:
                try:
                    row[kind] = run_case(case, kind, cupy)
                except CutShort:
                    raise
                except Exception as e:  # noqa: BLE001 - a build failure is a result too
                    row[kind] = {"result": "fail", "error": "".join(
                        traceback.format_exception_only(type(e), e)).strip()[:2000]}
                counts[(kind, row[kind]["result"])] = counts.get((kind, row[kind]["result"]), 0) + 1
        results.append(row)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--md", help="write the Markdown report here")
    parser.add_argument("--json", help="write the full results as JSON here")
    parser.add_argument("-k", default="", help="only the cases whose name contains this")
    parser.add_argument("--emulate", action="store_true",
                        help="run the cuda stencils on the host emulation instead of a GPU "
                             "(NumPy arrays only): checks this script where there is no GPU")
    args = parser.parse_args(argv)
    global EMULATE
    EMULATE = args.emulate
    warnings.simplefilter("ignore")
    try:
        if EMULATE:
            raise RuntimeError("the host emulation takes NumPy arrays only")
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - no CuPy or no device: the NumPy arrays only
        print(f"CuPy unusable ({type(e).__name__}: {e}): NumPy arrays only", file=sys.stderr)
        cupy = None
    probe = next(c for c in cases() if status(c)[0] == "ok")
    try:
        build_cuda(probe)(**probe.inputs(probe.build(REFERENCE), np.random.default_rng(0)))
    except RuntimeError as e:
        print(f"no GPU to check on: {e}", file=sys.stderr)
        return 2
    missing = []  # the registry leaves out a module it cannot import: say so
    for modname in MODULES:
        try:
            importlib.import_module(modname)
        except ImportError as e:
            missing.append(f"the stencils of {modname}, which does not import here ({e})")
    kinds = ["numpy"] + (["cupy"] if cupy is not None else [])
    results, counts = [], {}
    t0 = time.perf_counter()
    signal.signal(signal.SIGTERM, _cut_short)  # `timeout`: report the cases done so far
    try:
        _run_cases(args, kinds, cupy, results, counts)
    except CutShort:
        missing.append("the cases after the last one listed (the run was cut short: SIGTERM)")
    elapsed = time.perf_counter() - t0
    failed = [r for r in results if any(r.get(k, {}).get("result") == "fail" for k in kinds)]
    lines = [f"# cuda backend over the test registry vs the {REFERENCE} backend", "",
             f"device: {gpu_name(cupy)}; {len(results)} cases, "
             f"{sum(r['status'] == 'ok' for r in results)} with defined results; {elapsed:.0f} s", ""]
    if missing:
        lines.append(f"- left out: {', '.join(missing)}")
    for kind in kinds:
        lines.append(f"- {kind} arrays: {counts.get((kind, 'pass'), 0)} pass, "
                     f"{counts.get((kind, 'fail'), 0)} fail")
    lines += ["", "## failures" if failed else "## no failures", ""]
    if failed:
        lines += ["| case | arrays | what | max abs | max rel |", "|---|---|---|---:|---:|"]
        for r in failed:
            for kind in kinds:
                res = r.get(kind, {})
                if res.get("result") != "fail":
                    continue
                if "error" in res:
                    lines.append(f"| {r['case']} | {kind} | {res['error'].splitlines()[0][:300]} | | |")
                for name, f in res.get("fields", {}).items():
                    if not f["ok"]:
                        lines.append(f"| {r['case']} | {kind} | field {name} | {f['max_abs']:.3g} | "
                                     f"{f['max_rel']:.3g} |")
    text = "\n".join(lines) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reference": REFERENCE, "device": gpu_name(cupy), "seconds": elapsed,
                       "modules_left_out": missing,
                       "results": results}, f, indent=1)
    print(text)
    return 1 if failed or missing else 0


def gpu_name(cupy):
    if cupy is None:
        return "unknown (no CuPy)"
    try:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


if __name__ == "__main__":
    sys.exit(main())
