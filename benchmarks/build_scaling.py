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


#: the "drift" chain's offsets: every fourth statement reads its predecessor at the point,
#: and the extents grow with the length (the shape of issue 14's measurements)
DRIFT_OFFSETS = ((1, 0), (0, 1), (-1, 0), (0, -1))


def chained_source(n: int, name: str = "chain", drift: bool = False) -> str:
    """A stencil of n statements: t_k reads t_{k-1} at a horizontal offset and the input at
    two neighbours."""
    if drift:
        return drift_source(n, name)
    lines = [f"def {name}(a: Field[float], out: Field[float], c: float):",
             "    with computation(PARALLEL), interval(...):",
             "        t0 = a[0, 0, 0] * c"]
    for k in range(1, n):
        di, dj = OFFSETS[k % len(OFFSETS)]
        lines.append(f"        t{k} = 0.5 * t{k - 1}[{di}, {dj}, 0] "
                     f"+ 0.25 * (a[{di}, {dj}, 0] - a[{-dj}, {di}, 0])")
    lines.append(f"        out = t{n - 1}")
    return "\n".join(lines) + "\n"


PHYSICS_FUNCTIONS = """
@gtscript.function
def sat_table(t):
    # saturation vapour pressure over water, a piecewise polynomial standing in for a table
    tc = t - 273.16
    x = tc * 0.01
    es = 6.1078 + x * (44.39 + x * (14.29 + x * (2.65 + x * 0.303)))
    return es if tc > -40.0 else 0.19 + 0.0021 * (tc + 40.0)


@gtscript.function
def sat_table_ice(t):
    tc = t - 273.16
    x = tc * 0.01
    es = 6.1064 + x * (50.3 + x * (18.8 + x * (4.2 + x * 0.4)))
    return es if tc < 0.0 else sat_table(t)


@gtscript.function
def qsat(t, p, ice):
    es = sat_table_ice(t) if ice > 0.5 else sat_table(t)
    den = p - es
    return 0.622 * es / (den if den > 1.0 else 1.0)
"""

#: statements of one saturation-adjustment block after inlining its function calls
PHYSICS_BLOCK_STATEMENTS = 40


def physics_source(nblocks: int, name: str = "satadj") -> str:
    """A saturation-adjustment-style physics stencil (point-wise, as a column physics
    scheme): nblocks blocks, each of ~40 statements once its table lookups
    (@gtscript.function) are inlined, with nested ifs on fields and a dozen temporaries;
    every block adjusts the state the previous one left."""
    lines = [PHYSICS_FUNCTIONS, "",
             f"def {name}(t: Field[float], p: Field[float], qv: Field[float], "
             "ql: Field[float], qi: Field[float], dt: float):",
             "    with computation(PARALLEL), interval(...):",
             "        t0 = t", "        v0 = qv", "        l0 = ql", "        i0 = qi"]
    for b in range(1, nblocks + 1):
        a = b - 1
        f = 1.0 + 0.01 * b
        lines += [
            f"        qs{b} = qsat(t{a}, p, 0.0)",
            f"        qsi{b} = qsat(t{a}, p, 1.0)",
            f"        dq{b} = (v{a} - qs{b}) / (1.0 + 2.5e6 * 2.5e6 * qs{b} / (1004.0 * 461.5 * t{a} * t{a}))",
            f"        c{b} = 0.0",
            f"        fr{b} = 0.0",
            f"        if dq{b} > 0.0:",
            f"            c{b} = dq{b} * {f:.3f} * dt / (dt + 10.0)",
            f"            if t{a} < 258.16:",
            f"                fr{b} = c{b}",
            "            else:",
            f"                if t{a} < 273.16:",
            f"                    fr{b} = c{b} * (273.16 - t{a}) / 15.0",
            "        else:",
            f"            if l{a} > 0.0:",
            f"                c{b} = -(l{a} if l{a} < -dq{b} else -dq{b})",
            f"        sub{b} = 0.0",
            f"        if v{a} > qsi{b}:",
            f"            if t{a} < 273.16:",
            f"                sub{b} = 0.1 * (v{a} - qsi{b})",
            f"        v{b} = v{a} - c{b} - sub{b}",
            f"        l{b} = l{a} + c{b} - fr{b}",
            f"        i{b} = i{a} + fr{b} + sub{b}",
            f"        t{b} = t{a} + (2.5e6 * (c{b} - fr{b}) + 2.834e6 * (fr{b} + sub{b})) / 1004.0",
        ]
    lines += [f"        t = t{nblocks}", f"        qv = v{nblocks}", f"        ql = l{nblocks}",
              f"        qi = i{nblocks}"]
    return "\n".join(lines) + "\n"


#: the regions of the corner stencil: edges, corners and strips, as a cubed-sphere tile's
CORNER_REGIONS = ("region[I[0], :]", "region[I[-1], :]", "region[:, J[0]]", "region[:, J[-1]]",
                  "region[I[0], J[0]]", "region[I[-1], J[0]]", "region[I[0], J[-1]]",
                  "region[I[-1], J[-1]]", "region[I[0]:I[2], J[0]:J[2]]",
                  "region[I[-2]:I[-1], J[-2]:J[-1]]", "region[I[1], :]", "region[:, J[-2]]")


def corner_source(name: str = "corners") -> str:
    """A corner-region-heavy stencil: a dozen horizontal(region[...]) blocks that overwrite
    edge and corner values of offset-reading statements (the fills of a cubed-sphere tile's
    edges in a finite-volume dynamical core)."""
    lines = [f"def {name}(u: Field[float], v: Field[float], out: Field[float]):",
             "    with computation(PARALLEL), interval(...):"]
    prev = "u"
    for r, reg in enumerate(CORNER_REGIONS):
        lines += [f"        a{r} = 0.5 * ({prev}[1, 0, 0] + {prev}[-1, 0, 0]) + 0.25 * v[0, 1, 0]",
                  f"        b{r} = a{r}[0, 1, 0] - a{r}[0, -1, 0] + u",
                  f"        with horizontal({reg}):",
                  f"            a{r} = v[0, 0, 0] * {1 + r} + u[1, 1, 0]",
                  f"            b{r} = a{r} - v[-1, 0, 0]",
                  f"        c{r} = b{r}[1, 0, 0] * 0.5 + a{r}[0, -1, 0]"]
        prev = f"c{r}"
    lines.append(f"        out = {prev}")
    return "\n".join(lines) + "\n"


def blocks_source(n: int, name: str = "blocks") -> str:
    """n one-statement `with computation(PARALLEL), interval(...)` blocks (issue 13's
    definition of 2,000 blocks)."""
    lines = [f"def {name}(a: Field[float], b: Field[float]):"]
    for i in range(n):
        lines += ["    with computation(PARALLEL), interval(...):", f"        b = b + a * {i + 1}.0"]
    return "\n".join(lines) + "\n"


def drift_source(n: int, name: str) -> str:
    lines = [f"def {name}(a: Field[float], out: Field[float], c: float):",
             "    with computation(PARALLEL), interval(...):",
             "        t0 = a[0, 0, 0] * c"]
    for k in range(1, n):
        di, dj = DRIFT_OFFSETS[k % 4]
        prev = f"t{k - 1}[{di}, {dj}, 0]" if k % 4 else f"t{k - 1}"
        lines.append(f"        t{k} = 0.5 * {prev} + 0.25 * (a[{di}, {dj}, 0] - a[{-dj}, {di}, 0])")
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


def run(sizes, backend="cpu", drift=False, blocks=False):
    rows = []
    for n in sizes:
        if blocks:
            definition, _ = make_definition(blocks_source(n, f"blocks{n}"), f"blocks{n}")
        else:
            definition, _ = make_definition(chained_source(n, f"chain{n}", drift), f"chain{n}")
        info = build_cold(definition, backend)
        row = {"statements": n, "seconds": info["wall"],
               "ms_per_statement": 1e3 * info["wall"] / n}
        row.update({p: info.get(p, 0.0) for p in PHASES})
        row["pipeline"] = (f"{info.get('llvm_functions', 0)} functions, "
                           f"{info.get('llvm_cheap_functions', 0)} cheap")
        rows.append(row)
        print(format_row(row), flush=True)
    return rows


def verify(definition, nfields, nscalars, shape=(12, 11, 4), halo=3):
    """The cpu build of a definition against the numpy backend's on random data."""
    import numpy as np
    import gtscript
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(0.5, 1.5, shape) for _ in range(nfields)]
    inputs[0] = inputs[0] * 50.0 + 230.0  # temperatures, for the physics stencil
    results = []
    for backend in ("cpu", "numpy"):
        fields = [x.copy() for x in inputs]
        stencil = gtscript.stencil(backend, definition)
        stencil(*fields, *[0.5] * nscalars, origin=(halo, halo, 0),
                domain=(shape[0] - 2 * halo, shape[1] - 2 * halo, shape[2]))
        results.append(fields)
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def run_realistic(physics_blocks=20):
    rows = []
    cases = (("satadj", physics_source(physics_blocks), 5, 1,
              physics_blocks * PHYSICS_BLOCK_STATEMENTS + 8, 3),
             ("corners", corner_source(), 3, 0, 4 * len(CORNER_REGIONS) + 1, 25))
    for name, source, nfields, nscalars, statements, halo in cases:
        definition, _ = make_definition(source, name)
        info = build_cold(definition)
        verify(definition, nfields, nscalars, (2 * halo + 6, 2 * halo + 5, 3), halo)
        row = {"stencil": name, "statements": statements, "seconds": info["wall"],
               "ms_per_statement": 1e3 * info["wall"] / statements}
        row.update({p: info.get(p, 0.0) for p in PHASES})
        row["pipeline"] = f"{info['llvm_functions']} functions, {info['llvm_cheap_functions']} cheap"
        rows.append(row)
        print(format_row(row) + f"  ({name})", flush=True)
    return rows


def run_many(n=50, workers=None):
    """The wall time of building n distinct stencils cold (rebuild=True): one after the other,
    then with gtscript.build_all on a thread pool. Each stencil is a 20-statement chain with
    its own coefficients, so every build is a miss of every cache level."""
    import gtscript
    definitions = []
    for i in range(n):
        source = chained_source(20, f"many{i}").replace("0.25 *", f"{0.25 + 0.001 * i!r} *")
        definitions.append(make_definition(source, f"many{i}")[0])
    t0 = time.perf_counter()
    for d in definitions:
        gtscript.stencil("cpu", d, rebuild=True)
    serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    gtscript.build_all([(d, {"rebuild": True}) for d in definitions], max_workers=workers)
    parallel = time.perf_counter() - t0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{n} stencils cold: serial {serial:.2f} s, build_all {parallel:.2f} s "
          f"({workers or cores} threads, {cores} cores, load average {os.getloadavg()[0]:.1f})",
          flush=True)
    return {"stencils": n, "serial_seconds": serial, "parallel_seconds": parallel,
            "threads": workers or cores}


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
    parser.add_argument("--drift", action="store_true",
                        help="the chain whose extents grow with its length (wider halos)")
    parser.add_argument("--blocks", action="store_true",
                        help="one computation block per statement instead of the chain")
    parser.add_argument("--many", type=int, metavar="N",
                        help="only: build N distinct stencils cold, serially and with build_all")
    parser.add_argument("--threads", type=int, help="build_all's threads (default: the cores)")
    parser.add_argument("--realistic", action="store_true",
                        help="also the ~800-statement physics stencil and the corner-region "
                             "stencil, each checked against the numpy backend")
    args = parser.parse_args(argv)
    os.environ.setdefault("GTSCRIPT_CACHE_DIR", tempfile.mkdtemp(prefix="gtscript_cache_"))
    if args.many:
        row = run_many(args.many, args.threads)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(row, f, indent=1)
        return
    print(header())
    rows = run(args.sizes, args.backend, args.drift, args.blocks)
    if args.realistic:
        rows += run_realistic()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    main()
