"""How long it takes to get a compiled stencil: cold build, disk hit in a fresh process, and
re-decoration in the same process, for horizontal diffusion (benchmarks/definitions.py), and
the disk hits of the further stencils of a fresh process (the other four definitions).

    .venv/bin/python benchmarks/cache_bench.py [--repeat N]

Every process uses a fresh temporary GTSCRIPT_CACHE_DIR (the user's cache is never touched).
Timings are medians over N fresh processes; LLVM's one-off start-up in a process (loading
libLLVM at import, creating the JIT) is reported apart, as it is paid once per process
whatever the cache does.

Targets (docs/caching.md): disk hit in a fresh process < 2 ms for the first stencil (from
``gtscript.stencil(...)`` to the callable; ``import`` and the JIT's creation apart) and
< 0.5 ms for each further one, re-decoration < 0.5 ms, cold build < 100 ms.
``--no-index`` measures the same without the pre-key's disk index (every hit runs the frontend).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child(expect: str, no_index: bool) -> dict:
    """One fresh process: time getting hdiff, then the other definitions, then re-decorating
    hdiff."""
    t0 = time.perf_counter()
    import numpy as np

    import gtscript
    from gtscript import _core, frontend

    if no_index:
        from gtscript import _index

        _index.load = lambda key: None  # every lookup misses: the path before the index

    sys.path.insert(0, HERE)
    from definitions import definitions

    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    _core.target()  # creates LLVM's JIT: once per process
    t_jit = time.perf_counter() - t0

    defn = definitions(np.float64)["hdiff"]
    t0 = time.perf_counter()
    st = gtscript.stencil("cpu", defn)
    t_decorate = time.perf_counter() - t0
    info = st.build_info
    assert info["module_source"] == expect, (info["module_source"], expect)
    further = []
    for name, other_defn in definitions(np.float64).items():
        if name != "hdiff":
            t0 = time.perf_counter()
            other_st = gtscript.stencil("cpu", other_defn)
            further.append(time.perf_counter() - t0)
            assert other_st.build_info["module_source"] == expect

    # the parts of a decoration that do not depend on the cache: the frontend, and the C
    # core's IR build + analysis + key (the numpy backend does exactly these, then stops)
    other = definitions(np.float64)["hdiff"]
    t0 = time.perf_counter()
    tree = frontend.parse_definition(other, {})
    t_frontend = time.perf_counter() - t0
    t0 = time.perf_counter()
    _core.Module(tree, "numpy", {})
    t_analyse_key = time.perf_counter() - t0

    def median(fn, n=200):
        times = []
        for _ in range(n):
            s = time.perf_counter()
            fn()
            times.append(time.perf_counter() - s)
        return statistics.median(times)

    # the pre-key: the very same definition object (a re-run notebook cell that did not change)
    t_same = median(lambda: gtscript.stencil("cpu", defn))
    # the memory level: a definition whose source differs (an edited comment, a renamed
    # temporary) is lowered and analysed again, and its key finds the loaded code
    def equal_definition():
        m = _core.Module(frontend.parse_definition(other, {}), "cpu", {})
        assert m.build_info["module_source"] == "memory"

    t_equal = median(equal_definition, n=50)

    # the code is right: compare with NumPy
    rng = np.random.default_rng(0)
    inp, coeff = rng.standard_normal((32, 32, 8)), np.full((32, 32, 8), 0.025)
    out = np.zeros_like(inp)
    st(inp, coeff, out, origin=(2, 2, 0), domain=(28, 28, 8))
    import reference

    expect_out = np.zeros_like(inp)
    reference.hdiff(inp, coeff, expect_out)
    ok = bool(np.allclose(out, expect_out, rtol=1e-12, atol=1e-12))
    return {"import": t_import, "jit_init": t_jit, "decorate": t_decorate, "core": info["build_time"],
            "further_median": statistics.median(further), "further_max": max(further),
            "frontend": t_frontend, "analyse_key": t_analyse_key, "same_object": t_same,
            "equal_definition": t_equal, "correct": ok}


def run_child(cache_dir: str, expect: str, no_index: bool) -> dict:
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=cache_dir)
    r = subprocess.run([sys.executable, __file__, "--child", expect] + (["--no-index"] if no_index else []),
                       env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per measurement")
    parser.add_argument("--no-index", action="store_true",
                        help="without the pre-key's disk index (the path before it)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.no_index)))
        return

    cold, warm = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="gtscript-bench-cache-") as d:
            cold.append(run_child(d, "build", args.no_index))
            warm.append(run_child(d, "disk", args.no_index))

    def ms(rows, key):
        return 1e3 * statistics.median(r[key] for r in rows)

    table = [
        ("cold build (decorate, empty cache)", ms(cold, "decorate"), 100.0),
        ("  of which the C core: IR, analysis, key, LLVM, store", ms(cold, "core"), None),
        ("disk hit, fresh process, first stencil (decorate)", ms(warm, "decorate"), 2.0),
        ("disk hit, fresh process, each further stencil (median)", ms(warm, "further_median"), 0.5),
        ("disk hit, fresh process, the slowest further stencil", ms(warm, "further_max"), None),
        ("  of which the C core: IR, analysis, key, lookup, load", ms(warm, "core"), None),
        ("  of which lookup + load (core minus IR/analysis/key)",
         ms(warm, "core") - ms(warm, "analyse_key"), None),
        ("  frontend (Python source -> definition tree)", ms(warm, "frontend"), None),
        ("  IR build + analysis + key (no code)", ms(warm, "analyse_key"), None),
        ("re-decoration, same function object (pre-key)", ms(warm, "same_object"), 0.5),
        ("re-decoration, equivalent edited definition (memory level)", ms(warm, "equal_definition"), None),
        ("once per process: import gtscript (loads libLLVM)", ms(warm, "import"), None),
        ("once per process: create LLVM's JIT", ms(warm, "jit_init"), None),
    ]
    index = "without" if args.no_index else "with"
    print(f"horizontal diffusion, median of {args.repeat} fresh processes each, {index} the "
          f"pre-key's disk index\n")
    print(f"{'what':58s} {'ms':>9s} {'target':>8s}")
    for name, value, target in table:
        mark = "" if target is None else (f"< {target:g}" + (" ok" if value < target else " MISSED"))
        print(f"{name:58s} {value:9.3f} {mark:>8s}")
    if not all(r["correct"] for r in cold + warm):
        raise SystemExit("a stencil computed a wrong result")


if __name__ == "__main__":
    main()
