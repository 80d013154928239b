"""The GPU benchmark (benchmarks/run.py --backend cuda, benchmarks/cuda_suite.py) and the GPU
registry check (benchmarks/gpu/check_registry.py) where there is no GPU: they refuse clearly,
and their plumbing runs end to end with the cuda stencils on the host emulation and a stand-in
for CuPy built on NumPy (no timing is meant: the table, the JSON and the checks come out)."""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import subprocess
import sys
import time
import types

import numpy as np
import pytest

import gtscript
from cuda_emulation.runner import compiler, emulate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "benchmarks")
sys.path.insert(0, BENCH)
import cuda_suite  # noqa: E402
import reference  # noqa: E402
import suite  # noqa: E402


def _has_gpu() -> bool:
    try:
        cuda_suite.require_device()
    except cuda_suite.NoDevice:
        return False
    return True


def _nvrtc() -> bool:
    try:
        gtscript._core.nvrtc()
    except RuntimeError:
        return False
    return True


@pytest.mark.skipif(_has_gpu(), reason="this machine has a GPU and CuPy")
def test_cuda_benchmark_without_a_gpu_says_why_and_exits_2():
    done = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--backend", "cuda"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: the cuda benchmark needs "), done.stderr
    assert done.stdout == ""


def test_cuda_benchmark_runs_alone():
    done = subprocess.run([sys.executable, os.path.join(BENCH, "run.py"), "--backend", "cuda", "cpu"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--backend cuda runs the GPU suite on its own" in done.stderr


# --------------------------------------------------------- a stand-in for CuPy, on the host


class _Array(np.ndarray):
    """A NumPy array with CuPy's .data.ptr (the device pointer: here the host address)."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


def _fake_cupy():
    cp = types.ModuleType("cupy")
    cp.__version__ = "stand-in"
    cp.asarray = lambda a: np.array(a).view(_Array)
    cp.asnumpy = lambda a: np.array(a)
    cp.asfortranarray = lambda a: np.asfortranarray(a).view(_Array)
    cp.ascontiguousarray = lambda a: np.ascontiguousarray(a).view(_Array)
    cp.zeros = lambda shape, dtype=np.float64, order="C": np.zeros(shape, dtype, order=order).view(_Array)
    cp.ones = lambda shape, dtype=np.float64: np.ones(shape, dtype).view(_Array)
    cp.uint8 = np.uint8

    class Stream:
        ptr = 0

        def __init__(self, non_blocking=False):
            pass

        def synchronize(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class Event:
        def record(self, stream=None):
            self.t = time.perf_counter()

        def synchronize(self):
            pass

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, driverGetVersion=lambda: 13000, runtimeGetVersion=lambda: 13000,
        getDeviceProperties=lambda i: {"name": b"host stand-in", "major": 9, "minor": 0,
                                       "totalGlobalMem": 1 << 30, "multiProcessorCount": 1},
        memcpyDeviceToDevice=3,
        memcpyAsync=lambda dst, src, n, kind, stream: ctypes.memmove(dst, src, n))
    cp.cuda = types.SimpleNamespace(Stream=Stream, Event=Event, runtime=runtime,
                                    get_elapsed_time=lambda a, b: 1e3 * (b.t - a.t))

    class RawModule:
        """The hand-written hdiff: checked by the suite against NumPy like every column, so
        the stand-in runs the NumPy reference on the arrays it is given."""

        def __init__(self, code, options=(), name_expressions=()):
            assert "__global__ void hdiff" in code

        def get_function(self, name):
            return lambda grid, block, args: reference.hdiff(*args[:3])

    cp.RawModule = RawModule
    cp.ElementwiseKernel = lambda *a: (lambda x, y: np.copyto(y, x))
    return cp


@pytest.mark.skipif(compiler() is None or not _nvrtc(), reason="needs NVRTC and a host C compiler")
def test_suite_plumbing_on_the_emulation(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    monkeypatch.setattr(cuda_suite, "PEAK_COPY_BYTES", 1 << 20)
    real = gtscript.stencil

    def on_emulation(backend, definition, **kw):
        assert backend == "cuda"
        return emulate(real("cuda", definition, gpu_arch="sm_90", **kw))

    monkeypatch.setattr(cuda_suite.gtscript, "stencil", on_emulation)
    options = suite.Options(sizes=((12, 10, 6),), dtypes=(np.float64, np.float32), backends=("cuda",),
                            repeat=2, overhead_calls=20)
    report = cuda_suite.run(options, log=open(os.devnull, "w"))
    json.dumps(report)
    assert report["errors"] == []
    assert [(r["stencil"], r["dtype"]) for r in report["results"]] == [
        (s, d) for d in ("float64", "float32") for s in suite.STENCILS]
    for r in report["results"]:
        assert r["errors"] == {}, r["errors"]
        expected_columns = {"gtscript", "gtscript C order"} | ({"cupy"} if r["stencil"] in ("copy", "hdiff") else set())
        assert set(r["timings"]) == expected_columns
        for t in r["timings"].values():
            assert t["ms"] > 0 and t["gb_s"] > 0 and t["copy_fraction"] > 0
    assert report["call_overhead"]["cupy_arrays_us"] > 0
    text = cuda_suite.summary(report)
    assert "| hdiff | 12x10x6 | float32 |" in text and "call overhead" in text


@pytest.mark.skipif(compiler() is None or not _nvrtc(), reason="needs NVRTC and a host C compiler")
def test_a_wrong_cuda_result_is_reported_and_not_timed(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy())
    monkeypatch.setattr(cuda_suite, "PEAK_COPY_BYTES", 1 << 20)
    real = gtscript.stencil

    def wrong(backend, definition, **kw):
        st = emulate(real("cuda", definition, gpu_arch="sm_90", **kw))

        def call(*args, **kwargs):
            st(*args, **kwargs)
            out = kwargs.get("out")
            if out is not None:
                out += 1.0
        return call

    monkeypatch.setattr(cuda_suite.gtscript, "stencil", wrong)
    options = suite.Options(sizes=((12, 10, 6),), dtypes=(np.float64,), backends=("cuda",),
                            repeat=1, stencils=("laplacian",), overhead_calls=0)
    report = cuda_suite.run(options, log=open(os.devnull, "w"))
    (r,) = report["results"]
    assert set(r["errors"]) == {"gtscript", "gtscript C order"}
    assert "disagrees with NumPy" in r["errors"]["gtscript"]
    assert set(r["timings"]) == set()
    assert "left out (wrong or failed): laplacian 12x10x6 float64 gtscript" in cuda_suite.summary(report)


@pytest.mark.skipif(compiler() is None or not _nvrtc(), reason="needs NVRTC and a host C compiler")
def test_registry_check_on_the_emulation(tmp_path):
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    done = subprocess.run([sys.executable, os.path.join(BENCH, "gpu", "check_registry.py"),
                           "--emulate", "-k", "shared_stencils", "--md", str(md), "--json", str(js)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(js.read_text())
    ok = [r for r in report["results"] if r["status"] == "ok"]
    assert ok and all(r["numpy"]["result"] == "pass" for r in ok)
    assert "fail" not in md.read_text().split("## no failures")[0].replace("0 fail", "")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_registry_check_without_a_gpu_exits_2():
    done = subprocess.run([sys.executable, os.path.join(BENCH, "gpu", "check_registry.py")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "no GPU to check on" in done.stderr, done.stderr


def test_registry_check_compares_infinities_and_nans_as_equal_values():
    sys.path.insert(0, os.path.join(BENCH, "gpu"))
    import check_registry

    inf, nan = np.inf, np.nan
    want = np.array([1.0, inf, -inf, nan, 2.0])
    assert check_registry.compare(want.copy(), want) == (True, 0.0, 0.0)
    ok, worst, rel = check_registry.compare(np.array([1.0, inf, -inf, nan, 2.0 + 1e-9]), want)
    assert not ok and worst == pytest.approx(1e-9) and rel == pytest.approx(5e-10)
    for got in ([1.0, -inf, -inf, nan, 2.0], [1.0, inf, -inf, 0.0, 2.0], [nan, inf, -inf, nan, 2.0]):
        ok, worst, _ = check_registry.compare(np.array(got), want)
        assert not ok and worst == inf, got
    f32 = want.astype(np.float32)
    assert check_registry.compare(f32 * np.float32(1 + 2e-6), f32)[0]  # within float32's 1e-5
    assert check_registry.compare(np.array([1, 2], np.int8), np.array([1, 3], np.int8)) == (False, 1.0, 1.0)


def test_kernel_times_sum_a_calls_kernels_from_the_profiler(monkeypatch):
    """kernel_times reads PyTorch's profiler: the device time of the kernels each call
    launched (copies left out), per column (here a stand-in profiler: one recording per
    column, two kernels of 30 and 10 us per call, and a copy)."""
    calls = []

    class Event:
        def __init__(self, name, us, device="DeviceType.CUDA"):
            self.name, self.device_type = name, device
            self.time_range = types.SimpleNamespace(elapsed_us=lambda: us)

    class Profile:
        def __init__(self, activities):
            self.n = 0

        def __enter__(self):
            calls.clear()
            return self

        def __exit__(self, *exc):
            return False

        def events(self):
            evs = []
            for _ in calls:
                evs += [Event("gt_stage0", 30.0), Event("gt_stage1", 10.0),
                        Event("Memcpy DtoD", 99.0), Event("cudaLaunchKernel", 5.0, "DeviceType.CPU")]
            return evs

    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(synchronize=lambda: None)
    profiler = types.ModuleType("torch.profiler")
    profiler.ProfilerActivity = types.SimpleNamespace(CUDA="cuda")
    profiler.profile = Profile
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    stream = types.SimpleNamespace(synchronize=lambda: None)
    out = cuda_suite.kernel_times({"gtscript": lambda: calls.append(1)}, stream, 4)
    assert out == {"gtscript": {"kernel_ms": 0.04, "kernels_per_call": 2.0,
                                "names": ["gt_stage0", "gt_stage1"]}}
