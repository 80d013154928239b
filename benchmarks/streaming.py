"""Streaming stores on and off, per stencil, dtype, layout and thread count.

    python benchmarks/streaming.py [--size 256 256 80] [--repeat 15] [--threads 1 2]

For each of the suite's stencils (benchmarks/definitions.py) that write a field they never
read, one child process per setting of GTSCRIPT_STREAMING_STORES (0: plain stores, 1:
non-temporal stores into those fields; either turns the plan tuning off) calls the cpu
stencil `--repeat` times after a warm-up, each call after a buffer bigger than the last-level
cache was written over (as in the suite: the arrays come from memory, as after other
stencils' calls), and reports the median kernel time (exec_info's run time). Prints a
Markdown table: plain ms, streaming ms, their ratio, and what the model and the tuner choose
for that call (a third child, with the tuning on).
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, {here!r})
import definitions, suite
import gtscript
name, dtype, order, shape, repeat = {args!r}
dtype = np.dtype(dtype)
rng = np.random.default_rng(0)
inputs, scalars, out_name = suite._inputs(name, rng, shape, dtype)
arrays = {{**inputs, out_name: np.zeros(shape, dtype)}}
if order == "F":
    arrays = {{k: np.asfortranarray(v) for k, v in arrays.items()}}
halo = definitions.HALO[name]
call = suite._gtscript_call(gtscript.stencil("cpu", definitions.definitions(dtype)[name]))
call.settle(arrays, scalars, halo)  # the plan settled (tuned, where tuning is on), as the suite
times = []
for _ in range(repeat):
    suite._evict_caches()
    time.sleep(suite.SETTLE_SECONDS)
    info = {{}}
    call(arrays, scalars, halo, exec_info=info)
    times.append(info["run_end_time"] - info["run_start_time"])
plan = info["plan"]
print(json.dumps({{"ms": 1e3 * float(np.median(times)), "streaming": plan["streaming_stores"],
                  "why": plan["streaming_stores_why"]}}))
"""

#: The suite's stencils that write a field they never read (thomas reads its output).
STREAMED = ("copy", "laplacian", "hdiff", "advection")


def child(name, dtype, order, shape, repeat, threads, setting):
    env = dict(os.environ, GTSCRIPT_NUM_THREADS=str(threads))
    env.pop("GTSCRIPT_STREAMING_STORES", None)
    if setting is not None:
        env["GTSCRIPT_STREAMING_STORES"] = setting
    code = CHILD.format(here=HERE, args=(name, dtype, order, tuple(shape), repeat))
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs=3, default=[256, 256, 80])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    parser.add_argument("--stencils", nargs="+", default=list(STREAMED))
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    rows = []
    print("| stencil | dtype | layout | threads | plain ms | streaming ms | plain/streaming "
          "| chosen (tuning on) |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for threads in args.threads:
        for dtype in args.dtypes:
            for name in args.stencils:
                for order in ("C", "F"):
                    plain = child(name, dtype, order, args.size, args.repeat, threads, "0")
                    stream = child(name, dtype, order, args.size, args.repeat, threads, "1")
                    tuned = child(name, dtype, order, args.size, args.repeat, threads, None)
                    choice = ("streaming" if tuned["streaming"] else "plain") + \
                        f" {tuned['ms']:.2f} ms ({tuned['why'].split(' (')[0]})"
                    rows.append({"stencil": name, "dtype": dtype, "layout": order,
                                 "threads": threads, "plain_ms": plain["ms"],
                                 "streaming_ms": stream["ms"], "tuned": tuned})
                    print(f"| {name} | {dtype} | {order} | {threads} | {plain['ms']:.2f} | "
                          f"{stream['ms']:.2f} | {plain['ms'] / stream['ms']:.2f} | {choice} |",
                          flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": args.size, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
