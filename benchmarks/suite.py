"""The CPU performance suite: gtscript stencils against NumPy, Numba, hand-written C and STREAM.

For every stencil (copy, laplacian, hdiff, thomas, advection), grid size and dtype it
  1. runs each implementation once and checks its result against the NumPy reference
     (`benchmarks/reference.py`) with assert_allclose, before any timing;
  2. lets gtscript measure its call plans (its first calls on a domain may each run another
     plan: docs/performance.md#measured-call-plans), then times `repeat` calls of each after
     one warm-up call, interleaved, and keeps the median;
  3. reports GB/s from the bytes that must move once (every input array read once, the
     output's compute domain written once), % of the STREAM-style copy bandwidth, and the
     speed-up of gtscript over NumPy, Numba and C (their time / gtscript's time: > 1 means
     gtscript is faster).
It also measures the call overhead of an 8x8x8 copy (validate_args on) and the resident memory
growth over the same calls. `benchmarks/run.py` is the command line; `report.py` formats.
"""

import ctypes
import functools
import os
import platform
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import c_baselines  # noqa: E402
import definitions  # noqa: E402
import reference  # noqa: E402

import gtscript  # noqa: E402

STENCILS = ("copy", "laplacian", "hdiff", "thomas", "advection")
DEFAULT_SIZES = ((64, 64, 64), (256, 256, 80))
ALL_SIZES = ((64, 64, 64), (256, 256, 80), (512, 512, 80))
SETTLE_SECONDS = 0.02
TOLERANCE = {np.dtype(np.float64): {"rtol": 1e-10, "atol": 1e-12},
             np.dtype(np.float32): {"rtol": 2e-4, "atol": 2e-5}}


@dataclass
class Options:
    sizes: tuple = DEFAULT_SIZES
    dtypes: tuple = (np.float64,)
    backends: tuple = ("cpu",)
    repeat: int = 10
    max_seconds: float = 3.0      # per measurement: fewer than `repeat` calls for slow ones
    stencils: tuple = STENCILS
    numba: bool = True
    c: bool = True
    stream_mib: float = 0.0       # size of each STREAM array; 0: four times the last-level cache
    overhead_calls: int = 100_000  # 0: skip the call-overhead benchmark
    fortran: bool = False         # also time the first backend on Fortran-ordered arrays
    gt4py: bool = True            # GT4Py's numpy backend, when gt4py is importable
    gt4py_compiled: bool = False  # and its compiled backends (g++ and boost; slow builds)
    log: object = field(default=sys.stderr)


# ------------------------------------------------------------------------------------ cases


def _inputs(name, rng, shape, dtype):
    """(arrays in argument order, scalars in argument order, output name) of one case."""
    def normal(*names):
        return {n: rng.standard_normal(shape).astype(dtype) for n in names}

    if name in ("copy", "laplacian"):
        return normal("inp"), {}, "out"
    if name == "hdiff":
        return {**normal("inp"), "coeff": np.full(shape, 0.025, dtype=dtype)}, {}, "out"
    if name == "thomas":
        return dict(zip("abcd", reference.thomas_system(rng, shape, dtype))), {}, "x"
    fields, steps = reference.advection_state(rng, shape, dtype)
    return dict(zip("quvw", fields)), dict(zip(("dtdx", "dtdy", "dtdz"), steps)), "out"


def _bytes_moved(arrays, out, halo):
    """Inputs read once (whole arrays: the domain plus its halo) and the domain written once."""
    ni, nj, nk = out.shape
    domain = (ni - 2 * halo) * (nj - 2 * halo) * nk
    return sum(a.nbytes for a in arrays.values()) + domain * out.itemsize


# ----------------------------------------------------------------------------------- timing


def _timed(fn):
    """Wall time of one call, after a short pause: OpenMP runtimes keep their threads spinning
    for a while after a parallel region, and on a small machine those would steal the cores of
    whatever runs next (another implementation's threads)."""
    time.sleep(SETTLE_SECONDS)
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def time_calls(fns, repeat, max_seconds):
    """{name: median and spread of the wall times of up to `repeat` calls} for {name: fn}.

    Each function is called once to warm up; then the calls are interleaved, one of each per
    round, so load from other work on a shared machine falls on all of them alike. A slow
    function gets fewer calls (at least min(3, repeat)) once its calls would take longer than
    `max_seconds`, so slow baselines do not dominate the run; `calls` says how many."""
    calls = {}
    for name, fn in fns.items():
        warmup = _timed(fn)
        calls[name] = max(1, min(repeat, max(3, int(max_seconds / max(warmup, 1e-9)))))
    times = {name: [] for name in fns}
    for round_ in range(max(calls.values())):
        for name, fn in fns.items():
            if round_ < calls[name]:
                times[name].append(_timed(fn))
    return {name: _statistics(sorted(t)) for name, t in times.items()}


def _statistics(times):
    q1, q3 = times[len(times) // 4], times[(3 * len(times)) // 4]
    return {"ms": 1e3 * statistics.median(times), "min_ms": 1e3 * times[0],
            "iqr_ms": 1e3 * (q3 - q1), "calls": len(times)}


def _stream_elements(mib):
    """Elements (float64) per STREAM array: `mib` MiB, else 4x the last-level cache (>= 64 MiB)."""
    if mib <= 0:
        llc = 0
        base = "/sys/devices/system/cpu/cpu0/cache"
        for index in sorted(os.listdir(base)) if os.path.isdir(base) else ():
            try:
                with open(os.path.join(base, index, "size")) as f:
                    text = f.read().strip()
            except OSError:
                continue
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            llc = max(llc, int(text.rstrip("KM")) * scale)
        mib = min(1024, max(64, 4 * llc / (1 << 20)))
    return int(mib * (1 << 20)) // 8


def measure_stream(options):
    """Bandwidth of the OpenMP copy kernel on arrays well beyond the caches (STREAM `Copy`:
    2 x 8 bytes per element, write-allocate traffic not counted)."""
    n = _stream_elements(options.stream_mib)
    src = np.random.default_rng(1).standard_normal(n)
    dst = np.zeros(n)
    c_baselines.stream_copy(src, dst)
    if not np.array_equal(src, dst):
        raise AssertionError("STREAM copy kernel gave a wrong result")
    timing = time_calls({"copy": lambda: c_baselines.stream_copy(src, dst)},
                        max(options.repeat, 5), 30.0)["copy"]
    return {"array_mib": n * 8 / (1 << 20), "gb_s": 2 * src.nbytes / (timing["ms"] * 1e6),
            **timing}


def _rss_bytes():
    """Current resident set size (peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def median_call_us(fn, calls, warmup=1000):
    """Microseconds per call of ``fn``: the median of 10 batches of ``calls // 10`` calls,
    after a warm-up of at most ``warmup`` calls (caches, first-call plans, allocators)."""
    batches, per_batch = 10, max(1, calls // 10)
    for _ in range(min(per_batch, warmup)):
        fn()
    samples = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(per_batch):
            fn()
        samples.append((time.perf_counter() - start) / per_batch * 1e6)
    return statistics.median(samples)


def measure_call_overhead(backend, calls, log):
    """Microseconds per call of an 8x8x8 float64 copy with validate_args on (median over 10
    batches of calls/10), np.copyto for scale, and the RSS growth over those calls."""
    stencil = gtscript.stencil(backend, definitions.definitions(np.float64)["copy"])
    inp, out = np.random.default_rng(2).standard_normal((8, 8, 8)), np.zeros((8, 8, 8))

    def per_call_us(fn):
        return median_call_us(fn, calls)

    def call():
        stencil(inp=inp, out=out, validate_args=True)

    call()
    np.testing.assert_array_equal(out, inp)
    rss_before = _rss_bytes()
    gt_us = per_call_us(call)
    rss_after = _rss_bytes()
    np_us = per_call_us(lambda: np.copyto(out, inp))
    print(f"call overhead: {gt_us:.2f} us per call, RSS growth {rss_after - rss_before} bytes",
          file=log)
    return {"backend": backend, "shape": [8, 8, 8], "validate_args": True,
            "calls": 10 * max(1, calls // 10), "gtscript_us": gt_us, "numpy_copyto_us": np_us,
            "rss_before_bytes": rss_before, "rss_after_bytes": rss_after,
            "rss_growth_bytes": rss_after - rss_before}


# ------------------------------------------------------------------------------ the matrix


def _implementations(options, dtype, log):
    """{column name: {stencil: callable(arrays, scalars, halo)}} for one dtype; plus notes."""
    defs = definitions.definitions(dtype)
    impls, notes, build_s = {}, [], {}
    for backend in options.backends:
        table = {}
        for name in options.stencils:
            start = time.perf_counter()
            # rebuild=True: time the whole cold path (parse, analysis, JIT compile)
            stencil = gtscript.stencil(backend, defs[name], rebuild=True)
            build_s[f"{backend}/{name}"] = time.perf_counter() - start
            table[name] = _gtscript_call(stencil)
        impls[f"gtscript[{backend}]"] = table
        if options.fortran and backend == options.backends[0]:
            impls[f"gtscript[{backend}] {FORTRAN}"] = table
    impls["numpy"] = {name: _keyword_call(getattr(reference, name)) for name in options.stencils}
    if options.numba:
        try:
            import numba_kernels  # needs the optional numba
            kernels = numba_kernels.load(dtype)
        except ImportError as exc:
            notes.append(f"numba is not importable ({exc}): Numba columns skipped")
        else:
            impls["numba"] = {name: _positional_call(kernels[name]) for name in options.stencils}
    if options.gt4py or options.gt4py_compiled:
        _gt4py_implementations(options, dtype, impls, notes, build_s)
    if options.c:
        try:
            kernels = c_baselines.load(dtype)
        except c_baselines.CompileError as exc:
            notes.append(f"C baselines unavailable ({exc}): C columns skipped")
        else:
            impls["c"] = {name: _positional_call(kernels[name]) for name in options.stencils}
    for note in notes:
        print(note, file=log)
    return impls, notes, build_s


#: Prefix of the GT4Py columns: "gt4py[<backend>]", each on its backend's preferred layout.
GT4PY = "gt4py["


def _gt4py_implementations(options, dtype, impls, notes, build_s):
    """GT4Py's numpy backend (and with gt4py_compiled its compiled backends), built now; a
    backend that does not build here is left out with a note."""
    gt4py_environment()
    try:
        import gt4py_kernels  # needs the optional gt4py
    except ImportError as exc:
        notes.append(f"gt4py is not importable ({exc}): GT4Py columns skipped")
        return
    backends = (gt4py_kernels.NUMPY if options.gt4py else ()) + (
        gt4py_kernels.COMPILED if options.gt4py_compiled else ())
    for backend in backends:
        start = time.perf_counter()
        stencils, why = gt4py_build(
            lambda: gt4py_kernels.load(backend, dtype, options.stencils))
        if why is not None:
            notes.append(f"GT4Py {backend} does not build here ({why}): column skipped")
            continue
        build_s[f"gt4py:{backend}"] = time.perf_counter() - start
        impls[f"{GT4PY}{backend}]"] = {name: _gt4py_call(st) for name, st in stencils.items()}


def gt4py_environment():
    """Sets up the environment GT4Py reads when it is imported (call before importing it)."""
    # GT4Py writes its generated code under GT_CACHE_ROOT, read when it is imported: keep it
    # out of the working directory unless the caller chose a place
    if "GT_CACHE_ROOT" not in os.environ:
        import tempfile
        os.environ["GT_CACHE_ROOT"] = tempfile.mkdtemp(prefix="gtscript-bench-gt4py-")
    # GT4Py 1.1 compiles its extensions with -std=c++17, but the DaCe it requires (2.0) uses
    # std::bit_cast in its runtime headers, so dace:cpu fails to build; GT4Py appends this
    # variable's flags after its own (read when gt4py is imported), and the later -std wins.
    # The gridtools backends build and run the same under C++20.
    os.environ.setdefault("GT4PY_EXTRA_COMPILE_ARGS", "-std=c++20")


def gt4py_build(build):
    """(build(), None), or (None, why) where GT4Py's build fails here; build() makes GT4Py
    stencils and runs in GT4Py's cache directory."""
    gt4py_environment()
    # GT4Py's compiled backends run setuptools in the working directory, which refuses a
    # checkout of several top-level packages: build from the cache directory instead
    here = os.getcwd()
    try:
        os.makedirs(os.environ["GT_CACHE_ROOT"], exist_ok=True)
        os.chdir(os.environ["GT_CACHE_ROOT"])
        return build(), None
    # a missing compiler or header: GT4Py raises many kinds, and a failed C++ build in
    # setuptools exits (SystemExit "error: command ... failed")
    except (Exception, SystemExit) as exc:
        return None, ("its C++ build failed (the compiler's messages are on stderr)"
                      if isinstance(exc, SystemExit) else
                      f"{type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:160] if str(exc) else ''}")
    finally:
        os.chdir(here)


def _gt4py_call(stencil):
    def call(arrays, scalars, halo):
        ni, nj, nk = next(iter(arrays.values())).shape
        stencil(**arrays, **scalars, origin=(halo, halo, 0),
                domain=(ni - 2 * halo, nj - 2 * halo, nk), validate_args=False)
    return call


_EVICT = []


def _evict_caches():
    """Writes over a buffer of four times the last-level cache (at least 64 MiB, at most
    1 GiB), allocated once: what the caches held is gone, as after the other columns' calls."""
    if not _EVICT:
        _EVICT.append(np.empty(_stream_elements(0)))
    _EVICT[0].fill(1.0)


#: The most calls a plan's tuning takes (csrc/call/tune.h: two warm-up calls, then 9 candidates
#: and 2 more measured, each over up to 8 calls when a call is short).
TUNING_CALLS = 2 + 11 * 8


def _gtscript_call(stencil):
    def call(arrays, scalars, halo, exec_info=None):
        ni, nj, nk = next(iter(arrays.values())).shape
        stencil(**arrays, **scalars, origin=(halo, halo, 0),
                domain=(ni - 2 * halo, nj - 2 * halo, nk), exec_info=exec_info)

    def settle(arrays, scalars, halo, evict=True):
        """Calls until the call plan of these arrays is no longer being measured (the cpu
        backend's first calls on a domain each run a candidate plan), so that the timed
        calls all run the plan kept. Each tuning call runs as a timed one does: after the
        other implementations' calls have taken the caches (here: a buffer bigger than the
        last-level cache written over) and a pause, so that the plan kept is the fastest in
        the conditions it is timed in, not for arrays left in the cache by the call before
        (a model calls a stencil between others too, and tunes in those conditions).
        `evict=False` leaves the caches and the pause out (tests: no buffer of 4x the LLC)."""
        for _ in range(TUNING_CALLS + 1):
            if evict:
                _evict_caches()
                time.sleep(SETTLE_SECONDS)
            info = {}
            call(arrays, scalars, halo, exec_info=info)
            tuning = info.get("plan", {}).get("tuning")
            if tuning is None or tuning["state"] != "tuning":
                return

    call.settle = settle
    return call


def _keyword_call(fn):
    return lambda arrays, scalars, halo: fn(**arrays, **scalars)


def _positional_call(fn):
    return lambda arrays, scalars, halo: fn(*arrays.values(), *scalars.values())


#: Suffix of the column timing gtscript on Fortran-ordered (I unit-stride) arrays.
FORTRAN = "F-order"


def _arguments(column, inputs, out_name, shape, dtype):
    """One column's arrays: the shared inputs and its own zeroed output; Fortran-ordered
    copies for the F-order column (the layout variant with I innermost)."""
    if column.endswith(FORTRAN):
        return {**{k: np.asfortranarray(v) for k, v in inputs.items()},
                out_name: np.zeros(shape, dtype, order="F")}
    if column.startswith(GT4PY):
        import gt4py_kernels

        backend, halo = column[len(GT4PY):-1], max(definitions.HALO.values())
        return {k: gt4py_kernels.as_storage(v, backend, halo)
                for k, v in {**inputs, out_name: np.zeros(shape, dtype)}.items()}
    return {**inputs, out_name: np.zeros(shape, dtype)}


def run_case(name, shape, dtype, impls, options, rng):
    """Verify every implementation of one stencil on one grid, then time each."""
    dtype = np.dtype(dtype)
    inputs, scalars, out_name = _inputs(name, rng, shape, dtype)
    halo = definitions.HALO[name]
    args = {column: _arguments(column, inputs, out_name, shape, dtype) for column in impls}
    for column, table in impls.items():  # every result checked before anything is timed
        table[name](args[column], scalars, halo)
    for column, table in impls.items():  # and gtscript's call plans measured
        settle = getattr(table[name], "settle", None)
        if settle is not None:
            settle(args[column], scalars, halo)
    expected = args["numpy"][out_name]
    for column in impls:
        np.testing.assert_allclose(
            args[column][out_name], expected, **TOLERANCE[dtype],
            err_msg=f"{name} {shape} {dtype}: {column} disagrees with the NumPy reference")
    nbytes = _bytes_moved(inputs, expected, halo)
    fns = {column: functools.partial(table[name], args[column], scalars, halo)
           for column, table in impls.items()}
    timings = time_calls(fns, options.repeat, options.max_seconds)
    for timing in timings.values():
        timing["gb_s"] = nbytes / (timing["ms"] * 1e6)
    return {"stencil": name, "size": "x".join(map(str, shape)), "dtype": dtype.name,
            "bytes": nbytes, "timings": timings}


def _add_ratios(result, stream_gb_s, primary):
    timings = result["timings"]
    gt = timings[primary]["ms"]
    result["speedup_vs"] = {column: t["ms"] / gt for column, t in timings.items()
                            if column != primary}
    result["stream_fraction"] = (timings[primary]["gb_s"] / stream_gb_s) if stream_gb_s else None
    # the keys of the earlier benchmarks/run.py, kept for scripts that read them
    result["gtscript_ms"] = gt
    result["numpy_ms"] = timings["numpy"]["ms"]
    result["speedup"] = timings["numpy"]["ms"] / gt


def _load_average():
    """The 1, 5 and 15 minute load averages: other work on the machine makes timings noisy."""
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def _built_at(path):
    """When the compiled extension was written: which build of a changing tree was timed."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(os.path.getmtime(path)))


def _gt4py_version():
    try:
        from importlib.metadata import version
        return version("gt4py")
    except Exception:  # not installed
        return None


def machine_info():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu_model": model, "cpu_count": os.cpu_count(), "usable_cores": usable,
            "machine": platform.machine(), "system": platform.system(),
            "python_version": platform.python_version(), "numpy_version": np.__version__,
            "gtscript_version": getattr(gtscript, "__version__", None),
            "gtscript_core_built": _built_at(gtscript._core.__file__),
            "compiler": c_baselines.compiler_version(),
            "gt4py_version": _gt4py_version(),
            "threads_env": {k: os.environ.get(k) for k in
                            ("GTSCRIPT_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS")}}


def _map_large_arrays():
    """Every array of 1 MiB or more becomes a mapping of its own (glibc's M_MMAP_THRESHOLD).

    By default glibc raises that threshold each time a mapped block is freed, so after the first
    case the next case's arrays come from the heap: memory without the huge pages NumPy asks for
    on mappings, and up to 2x slower for a bandwidth-bound stencil (more TLB misses). Which
    implementation's output landed where was luck; fixed, every one gets the same kind of
    memory. Returns whether it could be set (glibc only)."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(-3, 1 << 20))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        return False


def run(options):
    """The whole suite; returns the JSON-ready report."""
    log = options.log
    mapped = _map_large_arrays()
    report = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": machine_info(), "repeat": options.repeat,
              "max_seconds": options.max_seconds, "backends": list(options.backends),
              "primary": f"gtscript[{options.backends[0]}]", "notes": [], "build_s": {},
              "load_average": {"start": _load_average()}, "results": [],
              "large_arrays_mapped": mapped}
    if options.numba:
        try:
            import numba
            report["machine"]["numba_version"] = numba.__version__
        except ImportError:
            pass
    stream = None
    if options.c:
        try:
            stream = {"start": measure_stream(options)}
            print(f"STREAM copy: {stream['start']['gb_s']:.1f} GB/s "
                  f"({stream['start']['array_mib']:.0f} MiB arrays)", file=log)
        except c_baselines.CompileError as exc:
            report["notes"].append(f"no STREAM measurement: {exc}")
    rng = np.random.default_rng(0)
    for dtype in options.dtypes:
        impls, notes, build_s = _implementations(options, dtype, log)
        report["notes"] += [n for n in notes if n not in report["notes"]]
        report["build_s"].update({f"{np.dtype(dtype).name}/{k}": v for k, v in build_s.items()})
        for shape in options.sizes:
            for name in options.stencils:
                result = run_case(name, shape, dtype, impls, options, rng)
                report["results"].append(result)
                print(f"  {name:<10} {result['size']:>11} {result['dtype']:<8} "
                      + " ".join(f"{c}={t['ms']:.3f}ms" for c, t in result["timings"].items()),
                      file=log)
    if options.overhead_calls > 0:
        report["call_overhead"] = measure_call_overhead(options.backends[0],
                                                        options.overhead_calls, log)
    report["load_average"]["end"] = _load_average()
    if stream:
        # measured again at the end: on a shared machine the bandwidth on offer drifts, and
        # the better of the two is the fairer yardstick for "% of STREAM"
        stream["end"] = measure_stream(options)
        best = max(stream["start"], stream["end"], key=lambda m: m["gb_s"])
        stream.update(gb_s=best["gb_s"], array_mib=best["array_mib"])
    report["stream"] = stream
    for result in report["results"]:
        _add_ratios(result, stream and stream["gb_s"], report["primary"])
    return report
