"""Column physics: a generated microphysics-style stencil timed on columns of 137 levels.

    .venv/bin/python benchmarks/column_physics.py --threads 1 --gt4py-compiled
    .venv/bin/python benchmarks/column_physics.py --quick                  # 100 and 1,024 columns
    .venv/bin/python benchmarks/column_physics.py --columns 8192 65536 --fortran --json out.json
    .venv/bin/python benchmarks/column_physics.py --size 0.5               # a smaller program

Two cases on arrays of (ncol, 1, nlev + 1) points, C order (K contiguous), origin (0, 0, 0):
  micro   the program of benchmarks/column_physics_gen.py (seeded): ~70 arguments, ~480
          temporaries, ~260 nested `if`s on values, exp/log/`**`/min/max, K-1 reads of a few
          fields and temporaries, two short FORWARD computations and one over the 137 levels;
          checked against its NumPy twin and timed against its hand-written C version;
  satadj  the saturation-adjustment-style stencil of benchmarks/build_scaling.py
          (`physics_source`, point-wise), checked against a NumPy version of it.
Every column is checked against the NumPy version (on the first --check-columns columns)
before anything is timed; then the columns are timed as benchmarks/suite.py times (median
wall time of up to --repeat calls, interleaved, after gtscript has settled its call plan).
Columns: gtscript cpu (and on Fortran-ordered arrays with --fortran, and built with
vector_math=True: libmvec's exp/log/pow, checked to a looser tolerance), hand-written C
(`cc -O3 -march=native -fopenmp`, micro only), the NumPy version (up to --numpy-max-columns
columns), gtscript's and GT4Py's numpy backends (up to 1,024 columns), and with
--gt4py-compiled GT4Py's gt:cpu_kfirst, gt:cpu_ifirst and dace:cpu (a backend that does not
build here is left out with a note). Ratios: gtscript's time over kfirst's and over C's
(> 1: gtscript is slower). The build times and gtscript's call plan of each size are printed.
"""

import argparse
import ctypes
import functools
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import build_scaling  # noqa: E402
import c_baselines  # noqa: E402
import column_physics_gen as gen  # noqa: E402
import suite  # noqa: E402

import gtscript  # noqa: E402

NLEV = 137
COLUMNS = (100, 1024, 8192, 65536)
QUICK_COLUMNS = (100, 1024)
#: the numpy backends (gtscript's and GT4Py's) run only on this many columns or fewer
SMALL_COLUMNS = 1024
SATADJ_BLOCKS = 20
#: every implementation against the NumPy version (exp/log/pow differ in their last bits
#: between libraries, and 137 levels of sedimentation carry the differences down)
RTOL, ATOL = 1e-8, 1e-14
#: gtscript with vector_math=True: libmvec's exp/log/pow are within 4 ulps of libm's, not the
#: same bits, and the microphysics' thresholds (`if q > 1e-12`) turn some of those differences
#: into larger ones further down the column (measured: 3.5e-7 relative at most, 1,024 columns);
#: the largest difference measured is reported with the results
VECTOR_MATH_RTOL = 1e-5
VECTOR_MATH = "gtscript[cpu] vector_math"
GT4PY_COMPILED = ("gt:cpu_kfirst", "gt:cpu_ifirst", "dace:cpu")
GT4PY_HEADER = ("import numpy as np\n"
                "from gt4py.cartesian.gtscript import Field, computation, interval, PARALLEL\n"
                "from gt4py.cartesian import gtscript\n")


# ------------------------------------------------------------------------------------ cases


class Case:
    """One stencil: its definitions, arguments, inputs and the NumPy version."""

    name = ""
    arguments = ()      # [(name, kind)], kind 'ijk', 'ij', 'k' or 'scalar'
    written = ()        # the arrays the stencil writes (checked)
    scalars = {}

    def inputs(self, ncol):
        raise NotImplementedError

    def numpy(self, arrays):
        """Runs the NumPy version on `arrays` in place."""
        raise NotImplementedError

    def c_kernel(self):
        """callable(arrays, scalars) or None."""
        return None


class Micro(Case):
    def __init__(self, seed=0, size=1.0, nlev=NLEV):
        self.program = gen.generate(seed, size)
        self.seed, self.nlev = seed, nlev
        self.name = "micro"
        self.arguments = self.program.arguments()
        self.written = self.program.inouts + self.program.outputs
        self.scalars = dict(gen.SCALAR_VALUES)
        self.gtscript_source = self.program.gtscript_source("micro")
        self.gt4py_source = self.program.gtscript_source("micro", gt4py=True)
        namespace = {}
        exec(compile(self.program.numpy_source("micro_numpy"), "<micro numpy twin>", "exec"),
             namespace)
        self._twin = namespace["micro_numpy"]
        self._c = None

    def inputs(self, ncol):
        return gen.inputs(self.program, ncol, self.nlev, self.seed)

    def numpy(self, arrays):
        self._twin(**arrays, **self.scalars)

    def c_kernel(self):
        if self._c is None:
            self._c = compile_c(self.program.c_source("micro_c"), "micro_c")
        names = [n for n, kind in self.arguments if kind != "scalar"]
        function = self._c

        def call(arrays, scalars):
            p = arrays["p"]
            for n in names:  # the C code indexes C-ordered float64 arrays of these shapes
                a = arrays[n]
                if a.dtype != np.float64 or not a.flags.c_contiguous:
                    raise ValueError(f"the C version needs C-contiguous float64 arrays: {n}")
            pointers = (ctypes.c_void_p * len(names))(*(arrays[n].ctypes.data for n in names))
            if function(pointers, p.shape[0], p.shape[2], scalars["dt"]) != 0:
                raise MemoryError("the C version could not allocate its column buffers")
        return call


class Satadj(Case):
    def __init__(self, nblocks=SATADJ_BLOCKS, nlev=NLEV, seed=0):
        self.nblocks, self.nlev, self.seed = nblocks, nlev, seed
        self.name = "satadj"
        self.arguments = [(n, "ijk") for n in ("t", "p", "qv", "ql", "qi")] + [("dt", "scalar")]
        self.written = ["t", "qv", "ql", "qi"]
        self.scalars = {"dt": 20.0}
        self.gtscript_source = build_scaling.physics_source(nblocks, "satadj")
        self.gt4py_source = GT4PY_HEADER + self.gtscript_source

    def inputs(self, ncol):
        rng = np.random.default_rng(self.seed)
        shape = (ncol, 1, self.nlev + 1)
        s = np.linspace(0.0, 1.0, shape[2])[None, None, :]
        t = 200.0 + 95.0 * s + rng.normal(0.0, 2.0, shape)
        p = 10.0 * np.exp(np.log(100.0) * s) * rng.uniform(0.99, 1.01, (ncol, 1, 1))  # hPa
        qs = 0.622 * _sat_table(t) / np.maximum(p - _sat_table(t), 1.0)
        return {"t": t, "p": p, "qv": np.minimum(qs * rng.uniform(0.6, 1.3, shape), 0.03),
                "ql": np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.0, 1e-3, shape)),
                "qi": np.where(rng.random(shape) < 0.5, 0.0, rng.uniform(0.0, 2e-4, shape))}

    def numpy(self, arrays):
        satadj_numpy(**arrays, **self.scalars, nblocks=self.nblocks)


def _sat_table(t):
    tc = t - 273.16
    x = tc * 0.01
    es = 6.1078 + x * (44.39 + x * (14.29 + x * (2.65 + x * 0.303)))
    return np.where(tc > -40.0, es, 0.19 + 0.0021 * (tc + 40.0))


def _qsat(t, p, ice):
    if ice:
        tc = t - 273.16
        x = tc * 0.01
        es = np.where(tc < 0.0, 6.1064 + x * (50.3 + x * (18.8 + x * (4.2 + x * 0.4))),
                      _sat_table(t))
    else:
        es = _sat_table(t)
    den = p - es
    return 0.622 * es / np.where(den > 1.0, den, 1.0)


def satadj_numpy(t, p, qv, ql, qi, dt, nblocks):
    """build_scaling.physics_source(nblocks), written with NumPy on whole arrays (the
    stencil is point-wise: one PARALLEL computation)."""
    ta, va, la, ia = t.copy(), qv.copy(), ql.copy(), qi.copy()
    for b in range(1, nblocks + 1):
        f = float(f"{1.0 + 0.01 * b:.3f}")  # the literal physics_source writes
        qs, qsi = _qsat(ta, p, False), _qsat(ta, p, True)
        dq = (va - qs) / (1.0 + 2.5e6 * 2.5e6 * qs / (1004.0 * 461.5 * ta * ta))
        cond = dq * f * dt / (dt + 10.0)
        fr_cond = np.where(ta < 258.16, cond,
                           np.where(ta < 273.16, cond * (273.16 - ta) / 15.0, 0.0))
        evap = -np.where(la < -dq, la, -dq)
        c = np.where(dq > 0.0, cond, np.where(la > 0.0, evap, 0.0))
        fr = np.where(dq > 0.0, fr_cond, 0.0)
        sub = np.where((va > qsi) & (ta < 273.16), 0.1 * (va - qsi), 0.0)
        va, la, ia, ta = (va - c - sub, la + c - fr, ia + fr + sub,
                          ta + (2.5e6 * (c - fr) + 2.834e6 * (fr + sub)) / 1004.0)
    t[...], qv[...], ql[...], qi[...] = ta, va, la, ia


# ---------------------------------------------------------------------------- building


_C_BUILD = []


def compile_c(source, symbol):
    """The C function `symbol` of `source`, compiled as benchmarks/c_baselines.py compiles the
    suite's baselines (raises c_baselines.CompileError without a compiler)."""
    import shutil

    if shutil.which(c_baselines.CC) is None:
        raise c_baselines.CompileError(f"no C compiler ({c_baselines.CC!r} is not on PATH)")
    if not _C_BUILD:  # lives as long as the process: the libraries stay mapped
        _C_BUILD.append(tempfile.TemporaryDirectory(prefix="gtscript-colbench-"))
    directory = _C_BUILD[0].name
    path = os.path.join(directory, f"{symbol}.c")
    with open(path, "w") as f:
        f.write(source)
    cmd = [c_baselines.CC, *c_baselines.CFLAGS, path, "-lm", "-o", path[:-2] + ".so"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise c_baselines.CompileError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    function = getattr(ctypes.CDLL(path[:-2] + ".so"), symbol)
    function.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_long, ctypes.c_double]
    function.restype = ctypes.c_int
    return function


def gtscript_definition(case):
    return build_scaling.make_definition(case.gtscript_source, case.name)[0]


def build_gtscript(case, backend, build_s, **options):
    """A cold build (rebuild=True) of the case on a gtscript backend; its time in build_s."""
    info = {}
    start = time.perf_counter()
    stencil = gtscript.stencil(backend, gtscript_definition(case), rebuild=True,
                               build_info=info, **options)
    name = ",".join([backend] + [k for k, v in options.items() if v])
    build_s[f"gtscript[{name}]"] = time.perf_counter() - start
    return stencil


def build_gt4py(case, backend, build_s, notes):
    def build():
        from gt4py.cartesian import gtscript as gt4py_gtscript
        definition = build_scaling.make_definition(case.gt4py_source, case.name)[0]
        return gt4py_gtscript.stencil(backend=backend, definition=definition)

    start = time.perf_counter()
    stencil, why = suite.gt4py_build(build)
    if why is not None:
        notes.append(f"{case.name}: GT4Py {backend} does not build here ({why}): "
                     "column skipped")
        return None
    build_s[f"gt4py[{backend}]"] = time.perf_counter() - start
    return stencil


# ------------------------------------------------------------------------------- columns


class Column:
    """One timed implementation: how to call it and on which arrays (its layout)."""

    def __init__(self, name, call, layout, settle=None, max_columns=None, rtol=RTOL):
        self.name, self.call, self.layout, self.settle = name, call, layout, settle
        self.max_columns, self.rtol = max_columns, rtol


def _with_scalars(fn):
    """(arrays, scalars, halo) -> fn(**arrays, **scalars), the suite's call signature."""
    return lambda arrays, scalars, halo: fn(arrays, scalars)


def implementations(case, options, log):
    """[Column] for the case, built now; plus notes and build times."""
    columns, notes, build_s = [], [], {}
    stencil = build_gtscript(case, "cpu", build_s)
    call = suite._gtscript_call(stencil)
    columns.append(Column("gtscript[cpu]", call, "C", settle=call.settle))
    if options.fortran:
        columns.append(Column(f"gtscript[cpu] {suite.FORTRAN}", call, "F", settle=call.settle))
    if options.vector_math:
        vm_call = suite._gtscript_call(build_gtscript(case, "cpu", build_s, vector_math=True))
        columns.append(Column(VECTOR_MATH, vm_call, "C", settle=vm_call.settle,
                              rtol=VECTOR_MATH_RTOL))
    if options.c:
        try:
            kernel = case.c_kernel()
        except c_baselines.CompileError as exc:
            notes.append(f"{case.name}: C version unavailable ({exc}): C column skipped")
        else:
            if kernel is not None:
                columns.append(Column("c", _with_scalars(kernel), "C"))
    columns.append(Column("numpy", _with_scalars(lambda a, s: case.numpy(a)), "C",
                          max_columns=options.numpy_max_columns))
    if options.numpy_backends:
        numpy_stencil = build_gtscript(case, "numpy", build_s)
        columns.append(Column("gtscript[numpy]", suite._gtscript_call(numpy_stencil), "C",
                              max_columns=SMALL_COLUMNS))
    backends = ((("numpy",) if options.numpy_backends and options.gt4py else ())
                + tuple(options.gt4py_compiled or ()))
    if backends:
        suite.gt4py_environment()
        try:
            import gt4py  # noqa: F401
        except ImportError as exc:
            notes.append(f"gt4py is not importable ({exc}): GT4Py columns skipped")
            backends = ()
    for backend in backends:
        print(f"{case.name}: building GT4Py {backend} ...", file=log, flush=True)
        gt4py_stencil = build_gt4py(case, backend, build_s, notes)
        if gt4py_stencil is not None:
            columns.append(Column(f"gt4py[{backend}]", suite._gt4py_call(gt4py_stencil),
                                  f"gt4py:{backend}",
                                  max_columns=SMALL_COLUMNS if backend == "numpy" else None))
    for note in notes:
        print(note, file=log)
    return columns, notes, build_s


class Layouts:
    """The arrays of each layout, made once per size from the pristine inputs; columns of one
    layout share them (at 65,536 columns one set of the micro case's arrays is ~5 GB)."""

    def __init__(self, case, pristine):
        self.case, self.pristine, self.sets = case, pristine, {}

    def get(self, layout):
        if layout in self.sets:
            return self.sets[layout]
        if layout == "C":
            arrays = {n: a.copy(order="C") for n, a in self.pristine.items()}
        elif layout == "F":
            arrays = {n: np.asfortranarray(a) for n, a in self.pristine.items()}
        else:
            import gt4py_kernels

            backend = layout[len("gt4py:"):]
            arrays = {n: gt4py_kernels.as_storage(a, backend, 0)
                      for n, a in self.pristine.items()}
            # the same strides as a set made already: share it (memory)
            for other in list(self.sets):
                if all(self.sets[other][n].strides == a.strides for n, a in arrays.items()):
                    self.sets[layout] = self.sets[other]
                    return self.sets[other]
        self.sets[layout] = arrays
        return arrays

    def reset(self, layout):
        """The written arrays back to the inputs' values."""
        arrays = self.get(layout)
        for n in self.case.written:
            arrays[n][...] = self.pristine[n]
        return arrays


def _plan_summary(info):
    plan = dict(info.get("plan") or {})
    tuning = plan.pop("tuning", None)
    keep = ("layout", "threads", "tile", "tile_why", "column_blocks", "column_blocks_why",
            "streaming_stores", "streaming_stores_why", "shared_memory")
    text = ", ".join(f"{k}={plan[k]}" for k in keep if k in plan)
    temporaries = plan.pop("temporaries", None)
    if isinstance(temporaries, dict):  # one entry per temporary: how many of each buffer
        kinds = {}
        for entry in temporaries.values():
            kind = entry.get("buffer") if isinstance(entry, dict) else entry
            kinds[kind] = kinds.get(kind, 0) + 1
        text += f", temporaries={len(temporaries)} ({kinds})"
    rest = sorted(k for k in plan if k not in keep)
    if rest:
        text += ", " + ", ".join(f"{k}={plan[k]}" for k in rest)
    if tuning:
        text += f", tuning={tuning.get('state')}"
    return text


def check(case, columns, ncol, options):
    """Runs every column (those that take ncol columns) once on fresh inputs and checks what
    it wrote against the NumPy version on the first options.check_columns columns; raises
    AssertionError on a difference. Returns (the columns, their Layouts, each column's
    largest relative difference from the NumPy version)."""
    pristine = case.inputs(ncol)
    ncheck = min(ncol, options.check_columns)
    # the first ncheck columns (a K field has no column axis)
    expected = {n: (a[:ncheck] if a.ndim > 1 else a).copy() for n, a in pristine.items()}
    case.numpy(expected)
    for n in case.written:
        if not np.all(np.isfinite(expected[n])):
            raise AssertionError(f"{case.name}: the NumPy version gave non-finite {n}")
    layouts = Layouts(case, pristine)
    active = [c for c in columns if c.max_columns is None or ncol <= c.max_columns]
    differences = {}
    for column in active:  # each column checked on fresh inputs before anything is timed
        arrays = layouts.reset(column.layout)
        column.call(arrays, case.scalars, 0)
        worst = 0.0
        for n in case.written:
            got = np.asarray(arrays[n])[:ncheck]
            np.testing.assert_allclose(
                got, expected[n], rtol=column.rtol, atol=ATOL,
                err_msg=f"{case.name} {ncol} columns: {column.name} disagrees with the NumPy "
                        f"version on {n}")
            scale = np.maximum(np.abs(expected[n]), ATOL / RTOL)
            worst = max(worst, float(np.max(np.abs(got - expected[n]) / scale)))
        differences[column.name] = worst
    return active, layouts, differences


def run_size(case, columns, ncol, options, log):
    """Check every column at ncol columns, then time them; a result row."""
    active, layouts, differences = check(case, columns, ncol, options)
    ncheck = min(ncol, options.check_columns)
    scalars = case.scalars
    plan = None
    for column in active:  # gtscript's call plans measured, in the conditions timed
        if column.settle is not None:
            column.settle(layouts.get(column.layout), scalars, 0)
            if plan is None:
                info = {}
                column.call(layouts.get(column.layout), scalars, 0, exec_info=info)
                plan = _plan_summary(info)
    for layout in list(layouts.sets):
        layouts.reset(layout)
    fns = {c.name: functools.partial(c.call, layouts.get(c.layout), scalars, 0)
           for c in active}
    timings = suite.time_calls(fns, options.repeat, options.max_seconds)
    row = {"case": case.name, "columns": ncol, "levels": case.nlev, "timings": timings,
           "checked_columns": ncheck, "plan": plan, "max_relative_difference": differences}
    gt = timings["gtscript[cpu]"]["ms"]
    row["gtscript_over"] = {c: gt / t["ms"] for c, t in timings.items() if c != "gtscript[cpu]"}
    print(f"  {case.name} {ncol:>6} columns: "
          + " ".join(f"{c}={t['ms']:.3f}ms" for c, t in timings.items()), file=log, flush=True)
    print(f"  {case.name} {ncol:>6} columns: gtscript plan: {plan}", file=log, flush=True)
    return row


# -------------------------------------------------------------------------------- report


LABELS = {"gtscript[cpu]": "gtscript", VECTOR_MATH: "gtscript vector_math", "c": "C", "numpy": "NumPy",
          "gtscript[numpy]": "gtscript numpy", f"gtscript[cpu] {suite.FORTRAN}": "gtscript F"}


def _label(column):
    if column.startswith("gt4py["):
        return "GT4Py " + column[len("gt4py["):-1].replace("gt:", "")
    return LABELS.get(column, column)


def markdown_table(rows):
    """One line per case and size: medians in ms, then gtscript's time over kfirst's and C's."""
    columns = []
    for r in rows:
        columns += [c for c in r["timings"] if c not in columns]
    head = (["case", "columns"] + [f"{_label(c)} ms" for c in columns]
            + ["gtscript / kfirst", "gtscript / C", "vector_math / kfirst", "vector_math / C"])
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for r in rows:
        t = r["timings"]
        cells = [r["case"], f"{r['columns']:,}"]
        cells += [f"{t[c]['ms']:.3f}" if c in t else "-" for c in columns]
        for other in ("gt4py[gt:cpu_kfirst]", "c"):
            ratio = r["gtscript_over"].get(other)
            cells.append("-" if ratio is None else f"{ratio:.2f}")
        for other in ("gt4py[gt:cpu_kfirst]", "c"):
            ok = VECTOR_MATH in t and other in t
            cells.append(f"{t[VECTOR_MATH]['ms'] / t[other]['ms']:.2f}" if ok else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(report):
    m = report["machine"]
    shape = report["micro_shape"]
    out = [f"# {report['date_utc']}: {m['cpu_model']}, {m['usable_cores']} usable cores, "
           f"threads {report['threads'] or 'default (all usable cores)'}, NumPy "
           f"{m['numpy_version']}, GT4Py {m['gt4py_version']}, {m['compiler'] or 'no C compiler'}",
           f"# micro (seed {report['seed']}, size {report['size']:g}): {shape['arguments']} "
           f"arguments, {shape['temporaries']} temporaries, {shape['conditionals']} `if`s "
           f"(nested {shape['max_nesting']} deep), {shape['k_minus_1_reads']} K-1 reads, "
           f"{shape['exp']} exp, {shape['log']} log, {shape['pow']} `**` after inlining, "
           f"{shape['statements_inlined']} statements after inlining; {NLEV} + 1 levels",
           f"# median of up to {report['repeat']} calls (at most {report['max_seconds']:g} s "
           "each); 'gtscript / X' = gtscript's time / X's time (> 1: gtscript is slower)",
           _load_line(report), "", markdown_table(report["results"]), ""]
    out += [f"plan ({r['case']}, {r['columns']:,} columns): {r['plan']}"
            for r in report["results"]]
    out += [f"largest relative difference from the NumPy version ({r['case']}, "
            f"{r['columns']:,} columns): "
            + ", ".join(f"{_label(c)} {d:.1e}" for c, d in r["max_relative_difference"].items())
            for r in report["results"]]
    out.append("cold builds: " + ", ".join(f"{k} {v:.1f} s"
                                           for k, v in report["build_s"].items()))
    out += [f"note: {n}" for n in report["notes"]]
    return "\n".join(out)


def _load_line(report):
    import report as formatting
    return formatting._load_line(report)


# ---------------------------------------------------------------------------------- main


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", metavar="N",
                        help="column counts (default 100 1024 8192 65536)")
    parser.add_argument("--quick", action="store_true", help="only 100 and 1,024 columns")
    parser.add_argument("--threads", type=int, default=0, metavar="N",
                        help="threads for gtscript, the C version and GT4Py's OpenMP backends "
                             "(default: each one's own default, the usable cores)")
    parser.add_argument("--fortran", action="store_true",
                        help="also time gtscript on Fortran-ordered (I contiguous) arrays")
    parser.add_argument("--gt4py-compiled", nargs="*", choices=GT4PY_COMPILED,
                        metavar="BACKEND",
                        help="also GT4Py's compiled backends: those named, or without a name "
                             f"all of {', '.join(GT4PY_COMPILED)} (g++; each build of micro "
                             "takes minutes, tens of minutes on a loaded machine)")
    parser.add_argument("--no-numpy-backends", action="store_true",
                        help="leave out gtscript's and GT4Py's numpy backends")
    parser.add_argument("--no-gt4py", action="store_true",
                        help="leave out GT4Py's numpy backend (its build of micro takes minutes)")
    parser.add_argument("--no-c", action="store_true", help="leave out the C version")
    parser.add_argument("--no-vector-math", action="store_true",
                        help="leave out gtscript built with vector_math=True")
    parser.add_argument("--cases", nargs="+", choices=("micro", "satadj"),
                        default=["micro", "satadj"])
    parser.add_argument("--size", type=float, default=1.0,
                        help="size of the generated program (default 1.0: ~480 temporaries)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed")
    parser.add_argument("--levels", type=int, default=NLEV, help="levels (default 137; +1)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--max-seconds", type=float, default=3.0,
                        help="stop a measurement after this long, with at least 3 calls")
    parser.add_argument("--numpy-max-columns", type=int, default=8192,
                        help="time the NumPy version up to this many columns (it still checks "
                             "every size, on --check-columns columns)")
    parser.add_argument("--check-columns", type=int, default=1024,
                        help="columns checked against the NumPy version at each size")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.columns and args.quick:
        parser.error("give --columns or --quick, not both")
    for name in ("threads", "repeat", "levels", "check_columns"):
        if getattr(args, name) < (0 if name == "threads" else 1):
            parser.error(f"--{name.replace('_', '-')} is too small")
    if args.columns and min(args.columns) < 1:
        parser.error("--columns must be positive")
    if args.size <= 0:
        parser.error("--size must be positive")
    if args.gt4py_compiled is not None and not args.gt4py_compiled:
        args.gt4py_compiled = list(GT4PY_COMPILED)  # --gt4py-compiled alone: all of them
    return args


def run(args, log=sys.stderr):
    """The whole benchmark for parsed arguments; the JSON-ready report."""
    if args.threads:
        for name in ("GTSCRIPT_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ[name] = str(args.threads)
    os.environ.setdefault("GTSCRIPT_CACHE_DIR", tempfile.mkdtemp(prefix="gtscript-colbench-"))
    suite._map_large_arrays()
    args.c = not args.no_c
    args.vector_math = not args.no_vector_math
    args.numpy_backends = not args.no_numpy_backends
    args.gt4py = not args.no_gt4py
    sizes = args.columns or (QUICK_COLUMNS if args.quick else COLUMNS)
    micro = Micro(args.seed, args.size, args.levels)
    report = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": suite.machine_info(), "threads": args.threads, "seed": args.seed,
              "size": args.size, "repeat": args.repeat, "max_seconds": args.max_seconds,
              "micro_shape": micro.program.counts(), "notes": [], "build_s": {},
              "load_average": {"start": suite._load_average()}, "results": []}
    cases = {"micro": micro, "satadj": Satadj(nlev=args.levels)}
    for name in args.cases:
        case = cases[name]
        print(f"{name}: building ...", file=log, flush=True)
        columns, notes, build_s = implementations(case, args, log)
        report["notes"] += notes
        report["build_s"].update({f"{name}/{k}": v for k, v in build_s.items()})
        for ncol in sizes:
            report["results"].append(run_size(case, columns, ncol, args, log))
    report["load_average"]["end"] = suite._load_average()
    return report


def main(argv=None):
    args = parse_args(argv)
    report = run(args)
    print(summary(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, default=str)
        print(f"\nresults written to {args.json}")


if __name__ == "__main__":
    main()
