"""Build time against stencil size, per phase.

    .venv/bin/python benchmarks/build_scaling.py                  # 10..500 statements
    .venv/bin/python benchmarks/build_scaling.py --sizes 10 100 1000 --json out.json

Generates stencils of chained temporaries read with horizontal offsets (the shape of a
finite-volume dynamical core: each statement reads the previous temporary at neighbouring
points, so every statement needs a loop nest of its own extent), builds each cold (a fresh
cache directory, rebuild=True) and prints ms per statement and the time of each phase of
``build_info`` (docs/performance.md). The offsets cycle through +I, -I, +J, -J, so every
suffix of the chain sums to at most one point: extents stay one point wide at any length.
"""

import argparse
import json
import os
import sys
import tempfile
import time

OFFSETS = ((1, 0), (-1, 0), (0, 1), (0, -1))
PHASES = ("frontend_time", "analysis_time", "llvm_ir_time", "optimise_time", "object_time",
          "load_time")


def chained_source(n: int, name: str = "chain") -> str:
    """A stencil of n statements: t_k reads t_{k-1} at a horizontal offset and the input at
    two neighbours."""
    lines = [f"def {name}(a: Field[float], out: Field[float], c: float):",
             "    with computation(PARALLEL), interval(...):",
             "        t0 = a[0, 0, 0] * c"]
    for k in range(1, n):
        di, dj = OFFSETS[k % len(OFFSETS)]
        lines.append(f"        t{k} = 0.5 * t{k - 1}[{di}, {dj}, 0] "
                     f"+ 0.25 * (a[{di}, {dj}, 0] - a[{-dj}, {di}, 0])")
    lines.append(f"        out = t{n - 1}")
    return "\n".join(lines) + "\n"


def make_definition(source: str, name: str):
    """The function of a generated definition, compiled from a file so that the frontend
    finds its source text."""
    directory = tempfile.mkdtemp(prefix="gtscript_gen_")
    path = os.path.join(directory, f"{name}.py")
    with open(path, "w") as f:
        f.write("from gtscript import Field, computation, interval, PARALLEL, FORWARD, BACKWARD\n")
        f.write("from gtscript import horizontal, region, I, J\n")
        f.write("import gtscript\n")
        f.write(source)
    namespace = {}
    exec(compile(open(path).read(), path, "exec"), namespace)
    import linecache
    linecache.checkcache(path)
    return namespace[name], path


def build_cold(definition, backend="cpu", **options):
    import gtscript
    info = {}
    t0 = time.perf_counter()
    gtscript.stencil(backend, definition, rebuild=True, build_info=info, **options)
    info["wall"] = time.perf_counter() - t0
    return info


def run(sizes, backend="cpu"):
    rows = []
    for n in sizes:
        definition, _ = make_definition(chained_source(n, f"chain{n}"), f"chain{n}")
        info = build_cold(definition, backend)
        row = {"statements": n, "seconds": info["wall"],
               "ms_per_statement": 1e3 * info["wall"] / n}
        row.update({p: info.get(p, 0.0) for p in PHASES})
        row["pipeline"] = info.get("llvm_pipeline", "")
        rows.append(row)
        print(format_row(row), flush=True)
    return rows


def format_row(r):
    phases = " ".join(f"{1e3 * r[p]:8.1f}" for p in PHASES)
    return (f"{r['statements']:6d} {1e3 * r['seconds']:9.1f} {r['ms_per_statement']:7.2f} "
            f"{phases}  {r.get('pipeline', '')}")


def header():
    return ("  stmts   wall ms  ms/stmt frontend analysis  llvm-ir optimise  codegen     load"
            "  pipeline")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100, 200, 500])
    parser.add_argument("--backend", default="cpu", choices=["cpu", "numpy"])
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    os.environ.setdefault("GTSCRIPT_CACHE_DIR", tempfile.mkdtemp(prefix="gtscript_cache_"))
    print(header())
    rows = run(args.sizes, args.backend)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
