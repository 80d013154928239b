"""The GPU performance suite: gtscript's cuda backend against the device's copy bandwidth and
hand-written CuPy kernels (`benchmarks/run.py --backend cuda`).

For every stencil (copy, laplacian, hdiff, thomas, advection), grid size and dtype it
  1. runs the cuda stencil once on CuPy arrays and checks its result against the NumPy
     reference (`benchmarks/reference.py`) before any timing;
  2. times `repeat` calls after warm-ups with CUDA events on one stream (cupy.cuda.Event; the
     call is given that stream, and synchronises it before it returns) and keeps the median;
     the host wall time per call is kept too;
  3. reports GB/s from the bytes that must move once (every input array read once, the
     output's compute domain written once) and its share of the device's copy bandwidth,
     measured in the same run: a device-to-device copy (cudaMemcpyAsync) of the same number of
     bytes (half read, half written), and of 1 GiB.
Fields are Fortran-ordered CuPy arrays (I unit-stride: neighbouring threads of a block touch
neighbouring elements; what gtscript.storage allocates for the cuda backend); the column
"C order" times the same stencil on C-ordered arrays. The CuPy columns are a hand-written
cupy.RawKernel hdiff and a cupy.ElementwiseKernel copy on the same arrays, timed alike (their
launches do not synchronise: their events bracket the kernel alone).
The call overhead is the wall time of an 8x8x8 float64 copy on CuPy arrays already on the
device (launch and synchronisation included), median over batches of calls.
Where PyTorch is installed, its profiler (CUPTI) also records the device time of the kernels
themselves ("kernel ms": the sum of a call's kernels, launch and synchronisation left out),
the measure of how close the generated code comes to the memory bandwidth.
"""

from __future__ import annotations

import os
import platform
import signal
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import definitions  # noqa: E402
import reference  # noqa: E402
import suite  # noqa: E402

import gtscript  # noqa: E402

DEFAULT_SIZES = ((256, 256, 80), (512, 512, 80))
#: Bytes the yardstick copy moves (half read, half written): 2 GiB, far beyond any cache.
PEAK_COPY_BYTES = 2 << 30
#: Also the kernels' own device time, through PyTorch's profiler where it is installed.
KERNEL_TIMES = True
TOLERANCE = suite.TOLERANCE


class NoDevice(RuntimeError):
    """No CuPy or no CUDA device: the cuda benchmark cannot run here."""


class CutShort(BaseException):
    """SIGTERM arrived (the caller's time limit): the report ends with the cases done."""


def _cut_short(signum, frame):
    raise CutShort


def require_device():
    """CuPy, with a device it can use; NoDevice saying what is missing otherwise."""
    try:
        import cupy
    except ImportError as exc:
        raise NoDevice(f"the cuda benchmark needs CuPy (pip install cupy-cuda12x or "
                       f"cupy-cuda13x): {exc}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CUDARuntimeError, or a missing driver library
        raise NoDevice(f"the cuda benchmark needs a CUDA device: {type(exc).__name__}: {exc}") from None
    if count < 1:
        raise NoDevice("the cuda benchmark needs a CUDA device: none found")
    return cupy


def device_info(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return {"name": name, "compute_capability": f"{props['major']}.{props['minor']}",
            "memory_gib": props["totalGlobalMem"] / (1 << 30),
            "multiprocessors": props["multiProcessorCount"],
            "driver": cupy.cuda.runtime.driverGetVersion(),
            "runtime": cupy.cuda.runtime.runtimeGetVersion(), "cupy": cupy.__version__,
            "numpy": np.__version__, "python": platform.python_version(),
            "gtscript": getattr(gtscript, "__version__", None),
            "gtscript_llvm": gtscript._core.target()["llvm"]}


# ----------------------------------------------------------------------------------- timing


def event_times(cupy, stream, fn, repeat, warmup=3):
    """Median (and min) milliseconds between CUDA events recorded on `stream` around each of
    `repeat` calls of fn() after `warmup` calls, and the median host wall time per call."""
    for _ in range(warmup):
        fn()
    stream.synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    ms, wall = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        start.record(stream)
        fn()
        end.record(stream)
        end.synchronize()
        wall.append(1e3 * (time.perf_counter() - t0))
        ms.append(cupy.cuda.get_elapsed_time(start, end))
    ms.sort()
    return {"ms": statistics.median(ms), "min_ms": ms[0], "wall_ms": statistics.median(wall),
            "calls": repeat}


def copy_bandwidth(cupy, stream, nbytes, repeat):
    """GB/s of a device-to-device copy moving `nbytes` (nbytes/2 read, nbytes/2 written)."""
    n = max(1, nbytes // 2)
    src = cupy.ones(n, dtype=cupy.uint8)
    dst = cupy.zeros(n, dtype=cupy.uint8)

    def copy():
        cupy.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, n,
                                      cupy.cuda.runtime.memcpyDeviceToDevice, stream.ptr)

    t = event_times(cupy, stream, copy, repeat)
    if not bool((dst == 1).all()):
        raise AssertionError("the device-to-device copy gave a wrong result")
    return {"bytes": 2 * n, "gb_s": 2 * n / (t["ms"] * 1e6), **t}


def kernel_times(fns, stream, repeat):
    """{column: device milliseconds per call of the kernels fn() launches, kernels per call
    and their names}, from the CUDA activity PyTorch's profiler (CUPTI) records over `repeat`
    calls of each fn (copies between host and device left out); {} without PyTorch, or where
    its profiler records no kernels."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        return {}
    out = {}
    for column, fn in fns.items():
        fn()
        stream.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(repeat):
                fn()
            stream.synchronize()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if str(e.device_type).endswith("CUDA")
                   and not e.name.lower().startswith(("memcpy", "memset"))]
        if not kernels:
            continue
        total_us = sum(e.time_range.elapsed_us() for e in kernels)
        out[column] = {"kernel_ms": total_us / repeat / 1e3, "kernels_per_call": len(kernels) / repeat,
                       "names": sorted({e.name for e in kernels})[:8]}
    return out


# ----------------------------------------------------------------------- CuPy baselines

HDIFF_SOURCE = r"""
// hdiff on Fortran-ordered arrays (I fastest): one thread per point of the compute domain.
template <typename T>
__device__ T lap(const T* in, long i, long j, long k, long si, long sj, long sk) {
    long p = i * si + j * sj + k * sk;
    return (T)4 * in[p] - (in[p + si] + in[p - si] + in[p + sj] + in[p - sj]);
}
template <typename T>
__device__ T flux(T res, T a, T b) { return res * (a - b) > (T)0 ? (T)0 : res; }
template <typename T>
__global__ void hdiff(const T* in, const T* coeff, T* out, long ni, long nj, long nk) {
    const long h = 2, si = 1, sj = ni, sk = ni * nj;
    long i = h + blockIdx.x * (long)blockDim.x + threadIdx.x;
    long j = h + blockIdx.y * (long)blockDim.y + threadIdx.y;
    if (i >= ni - h || j >= nj - h) return;
    for (long k = 0; k < nk; k++) {
        long p = i * si + j * sj + k * sk;
        T l0 = lap(in, i, j, k, si, sj, sk);
        T lxp = lap(in, i + 1, j, k, si, sj, sk), lxm = lap(in, i - 1, j, k, si, sj, sk);
        T lyp = lap(in, i, j + 1, k, si, sj, sk), lym = lap(in, i, j - 1, k, si, sj, sk);
        T fx = flux(lxp - l0, in[p + si], in[p]);
        T fxm = flux(l0 - lxm, in[p], in[p - si]);
        T fy = flux(lyp - l0, in[p + sj], in[p]);
        T fym = flux(l0 - lym, in[p], in[p - sj]);
        out[p] = in[p] - coeff[p] * (fx - fxm + fy - fym);
    }
}
"""


def cupy_baselines(cupy, dtype):
    """{stencil: callable(arrays, scalars, stream)} of the hand-written CuPy kernels."""
    ctype = {np.dtype(np.float64): "double", np.dtype(np.float32): "float"}[np.dtype(dtype)]
    module = cupy.RawModule(code=HDIFF_SOURCE, options=("-std=c++17",),
                            name_expressions=[f"hdiff<{ctype}>"])
    hdiff_kernel = module.get_function(f"hdiff<{ctype}>")
    copy_kernel = cupy.ElementwiseKernel("T x", "T y", "y = x", "gtscript_bench_copy")

    def hdiff(arrays, scalars, stream):
        inp, coeff, out = arrays["inp"], arrays["coeff"], arrays["out"]
        ni, nj, nk = inp.shape
        block = (64, 4, 1)
        grid = ((ni - 4 + block[0] - 1) // block[0], (nj - 4 + block[1] - 1) // block[1], 1)
        with stream:
            hdiff_kernel(grid, block, (inp, coeff, out, np.int64(ni), np.int64(nj), np.int64(nk)))

    def copy(arrays, scalars, stream):
        with stream:
            copy_kernel(arrays["inp"], arrays["out"])

    return {"hdiff": hdiff, "copy": copy}


# ------------------------------------------------------------------------------ the matrix


def _gtscript_call(stencil, stream):
    def call(arrays, scalars, halo):
        ni, nj, nk = next(iter(arrays.values())).shape
        stencil(**arrays, **scalars, origin=(halo, halo, 0),
                domain=(ni - 2 * halo, nj - 2 * halo, nk), stream=stream)
    return call


def run_case(cupy, stream, name, shape, dtype, gt, baselines, options, rng, log):
    dtype = np.dtype(dtype)
    inputs, scalars, out_name = suite._inputs(name, rng, shape, dtype)
    halo = definitions.HALO[name]
    expected = np.zeros(shape, dtype)
    getattr(reference, name)(**inputs, **{out_name: expected}, **scalars)
    nbytes = suite._bytes_moved(inputs, expected, halo)
    columns = {"gtscript": "F", "gtscript C order": "C"}
    args = {}
    for column, order in columns.items():
        conv = cupy.asfortranarray if order == "F" else cupy.ascontiguousarray
        args[column] = {**{k: conv(cupy.asarray(v)) for k, v in inputs.items()},
                        out_name: conv(cupy.zeros(shape, dtype))}
    fns = {column: (lambda column=column: gt(args[column], scalars, halo)) for column in columns}
    if name in baselines:
        args["cupy"] = {**{k: cupy.asfortranarray(cupy.asarray(v)) for k, v in inputs.items()},
                        out_name: cupy.asfortranarray(cupy.zeros(shape, dtype))}
        fns["cupy"] = lambda: baselines[name](args["cupy"], scalars, stream)
    errors = {}
    for column, fn in list(fns.items()):  # every result checked before anything is timed
        try:
            fn()
            stream.synchronize()
            got = cupy.asnumpy(args[column][out_name])
            if halo:
                got, want = got[halo:-halo, halo:-halo], expected[halo:-halo, halo:-halo]
            else:
                got, want = got, expected
            np.testing.assert_allclose(got, want, **TOLERANCE[dtype],
                                       err_msg=f"{name} {shape} {dtype}: {column} disagrees with NumPy")
        except CutShort:
            raise
        except Exception as exc:  # noqa: BLE001 - a wrong or failing column is reported, not timed
            errors[column] = f"{type(exc).__name__}: {exc}"[:1500]
            print(f"  {name} {shape} {dtype}: {column} left out: {errors[column]}", file=log)
            del fns[column]
    timings = {column: event_times(cupy, stream, fn, options.repeat) for column, fn in fns.items()}
    copy = copy_bandwidth(cupy, stream, nbytes, options.repeat)
    for t in timings.values():
        t["gb_s"] = nbytes / (t["ms"] * 1e6)
        t["copy_fraction"] = t["gb_s"] / copy["gb_s"]
    if KERNEL_TIMES:
        try:
            kernels = kernel_times(fns, stream, min(options.repeat, 10))
        except CutShort:
            raise
        except Exception as exc:  # noqa: BLE001 - the profiler is optional
            errors["kernel times"] = f"{type(exc).__name__}: {exc}"[:1500]
            kernels = {}
        for column, k in kernels.items():
            timings[column].update(k)
            timings[column]["kernel_gb_s"] = nbytes / (k["kernel_ms"] * 1e6)
            timings[column]["kernel_copy_fraction"] = timings[column]["kernel_gb_s"] / copy["gb_s"]
    result = {"stencil": name, "size": "x".join(map(str, shape)), "dtype": dtype.name,
              "bytes": nbytes, "timings": timings, "copy": copy, "errors": errors}
    print(f"  {name:<10} {result['size']:>11} {dtype.name:<8} "
          + " ".join(f"{c}={t['ms']:.3f}ms ({100 * t['copy_fraction']:.0f}%)"
                     for c, t in timings.items()) + f" copy={copy['gb_s']:.0f}GB/s", file=log)
    return result


def call_overhead(cupy, stream, calls, log):
    """Microseconds per call of an 8x8x8 float64 copy on CuPy arrays (launch and the call's
    stream synchronisation included), median over 10 batches; NumPy arrays (copies to the
    device and back included) and an empty CuPy kernel launch + synchronisation for scale."""
    stencil = gtscript.stencil("cuda", definitions.definitions(np.float64)["copy"])
    host = np.random.default_rng(2).standard_normal((8, 8, 8))
    inp, out = cupy.asfortranarray(cupy.asarray(host)), cupy.zeros((8, 8, 8), order="F")
    host_out = np.zeros_like(host)

    def per_call_us(fn):
        return suite.median_call_us(fn, calls, warmup=200)

    stencil(inp, out, stream=stream)
    np.testing.assert_array_equal(cupy.asnumpy(out), host)
    empty = cupy.ElementwiseKernel("T x", "T y", "y = x", "gtscript_bench_tiny")

    def cupy_launch():
        with stream:
            empty(inp, out)
        stream.synchronize()

    result = {"shape": [8, 8, 8], "calls": 10 * max(1, calls // 10),
              "cupy_arrays_us": per_call_us(lambda: stencil(inp, out, stream=stream)),
              "numpy_arrays_us": per_call_us(lambda: stencil(host, host_out, stream=stream)),
              "cupy_kernel_and_sync_us": per_call_us(cupy_launch)}
    print(f"call overhead: {result['cupy_arrays_us']:.1f} us per call on CuPy arrays, "
          f"{result['numpy_arrays_us']:.1f} us on NumPy arrays (a CuPy kernel and a "
          f"synchronisation: {result['cupy_kernel_and_sync_us']:.1f} us)", file=log)
    return result


def run(options, log=sys.stderr):
    """The whole GPU suite; returns the JSON-ready report. NoDevice without CuPy or a GPU."""
    cupy = require_device()
    stream = cupy.cuda.Stream(non_blocking=True)
    report = {"date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "device": device_info(cupy), "repeat": options.repeat, "results": [],
              "build_s": {}, "layout": "Fortran order (I unit-stride) unless the column says"}
    report["peak_copy"] = copy_bandwidth(cupy, stream, PEAK_COPY_BYTES, max(options.repeat, 10))
    print(f"device: {report['device']['name']}; {PEAK_COPY_BYTES / 2**31:g} GiB device copy: "
          f"{report['peak_copy']['gb_s']:.0f} GB/s", file=log)
    rng = np.random.default_rng(0)
    report["errors"] = []  # what failed, with the rest of the suite run regardless

    def failed(what, exc):
        text = f"{what}: {type(exc).__name__}: {exc}"[:2000]
        report["errors"].append(text)
        print(f"  error: {text}", file=log)

    previous = signal.signal(signal.SIGTERM, _cut_short)
    try:
        _matrix(cupy, stream, options, report, rng, failed, log)
        if options.overhead_calls > 0:
            try:
                report["call_overhead"] = call_overhead(cupy, stream, options.overhead_calls, log)
            except CutShort:
                raise
            except Exception as exc:  # noqa: BLE001
                failed("call overhead", exc)
    except CutShort:
        failed("the run", RuntimeError("cut short by SIGTERM: the cases not listed did not run"))
    finally:
        signal.signal(signal.SIGTERM, previous)
    return report


def _matrix(cupy, stream, options, report, rng, failed, log):
    for dtype in options.dtypes:
        defs = definitions.definitions(dtype)
        try:
            baselines = cupy_baselines(cupy, dtype)
        except CutShort:
            raise
        except Exception as exc:  # noqa: BLE001 - the CuPy columns are left out
            failed(f"CuPy baselines ({np.dtype(dtype).name})", exc)
            baselines = {}
        for name in options.stencils:
            try:
                start = time.perf_counter()
                stencil = gtscript.stencil("cuda", defs[name], rebuild=True)
                report["build_s"][f"{np.dtype(dtype).name}/{name}"] = time.perf_counter() - start
            except CutShort:
                raise
            except Exception as exc:  # noqa: BLE001
                failed(f"building {name} ({np.dtype(dtype).name})", exc)
                continue
            gt = _gtscript_call(stencil, stream)
            for shape in options.sizes:
                try:
                    report["results"].append(run_case(cupy, stream, name, shape, dtype, gt,
                                                      baselines, options, rng, log))
                except CutShort:
                    raise
                except Exception as exc:  # noqa: BLE001
                    failed(f"{name} {shape} {np.dtype(dtype).name}", exc)


def summary(report):
    """The report as Markdown: a header, the table, the call overhead, the build times."""
    d = report["device"]
    out = [f"# {report['date_utc']}: {d['name']} (sm {d['compute_capability']}, "
           f"{d['multiprocessors']} SMs, {d['memory_gib']:.0f} GiB), driver {d['driver']}, "
           f"CuPy {d['cupy']}, NumPy {d['numpy']}, Python {d['python']}, gtscript "
           f"{d['gtscript']} (LLVM: {d['gtscript_llvm']})",
           f"# median of {report['repeat']} calls timed with CUDA events; GB/s = bytes that must "
           f"move once (inputs read, domain written) / time; '% copy' = of a device-to-device "
           f"copy of the same bytes in this run; a copy of {report['peak_copy']['bytes'] / 2**31:g} GiB: "
           f"{report['peak_copy']['gb_s']:.0f} GB/s",
           "# gtscript ms: one call on its stream, launch and the call's synchronisation included "
           "(wall ms: the host's view); kernel ms: the device time of the call's kernels alone "
           "(CUPTI, through PyTorch's profiler; '-' without PyTorch)",
           "",
           "| stencil | size | dtype | MB moved | gtscript ms | GB/s | % copy | wall ms | "
           "kernel ms | kernel % copy | C order ms | C order % copy | CuPy ms | CuPy % copy | "
           "CuPy kernel ms | copy GB/s |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    def cells(t, wall=False):
        if t is None:
            return ["-", "-"] + (["-", "-"] if wall else [])
        return ([f"{t['ms']:.3f}"] + ([f"{t['gb_s']:.0f}"] if wall else [])
                + [f"{100 * t['copy_fraction']:.0f}"] + ([f"{t['wall_ms']:.3f}"] if wall else []))

    for r in report["results"]:
        t = r["timings"]
        g, cp = t.get("gtscript", {}), t.get("cupy", {})
        kernel = ([f"{g['kernel_ms']:.3f}", f"{100 * g['kernel_copy_fraction']:.0f}"]
                  if "kernel_ms" in g else ["-", "-"])
        row = [r["stencil"], r["size"], r["dtype"], f"{r['bytes'] / 1e6:.0f}",
               *cells(t.get("gtscript"), wall=True), *kernel, *cells(t.get("gtscript C order")),
               *cells(t.get("cupy")), f"{cp['kernel_ms']:.3f}" if "kernel_ms" in cp else "-",
               f"{r['copy']['gb_s']:.0f}"]
        out.append("| " + " | ".join(row) + " |")
    o = report.get("call_overhead")
    if o:
        out += ["", f"call overhead (8x8x8 float64 copy, {o['calls']} calls, wall time per call): "
                    f"{o['cupy_arrays_us']:.1f} us on CuPy arrays, {o['numpy_arrays_us']:.1f} us on "
                    f"NumPy arrays (copies included); a CuPy kernel launch and a stream "
                    f"synchronisation: {o['cupy_kernel_and_sync_us']:.1f} us"]
    for r in report["results"]:
        for column, text in r.get("errors", {}).items():
            out.append(f"- left out (wrong or failed): {r['stencil']} {r['size']} {r['dtype']} "
                       f"{column}: {text.splitlines()[0]}")
    for text in report.get("errors", []):
        out.append(f"- error: {text.splitlines()[0]}")
    out += ["", "cold builds (rebuild=True, NVRTC): " + ", ".join(
        f"{k} {1e3 * v:.0f} ms" for k, v in report["build_s"].items())]
    return "\n".join(out)
