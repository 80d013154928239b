"""The cuda backend on a real GPU: run only when the CUDA driver finds a device (elsewhere
every test here is skipped with the driver's reason). Each stencil of the suite must give the
cpu backend's results (the numpy backend's in a core built without LLVM) on NumPy arrays, and on arrays exposing __cuda_array_interface__ (CuPy
or PyTorch, when installed) used in place."""

from __future__ import annotations

import copy
import importlib.util

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from cuda_emulation.registry import REFERENCE, cases, status


def copy_defn(inp: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out = inp


def _gpu_missing() -> str:
    """Why there is no GPU to test on ("" when there is one)."""
    try:
        st = gtscript.stencil("cuda", copy_defn, rebuild=True)
        st(np.ones((2, 2, 2)), np.zeros((2, 2, 2)))
    except RuntimeError as e:
        return str(e)
    return ""


REASON = _gpu_missing()
pytestmark = pytest.mark.skipif(bool(REASON), reason=f"needs a GPU: {REASON}")
CASES = cases() if not REASON else []


def _close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        tol = {"rtol": 1e-5, "atol": 1e-5} if a.dtype == np.float32 else {"rtol": 1e-11, "atol": 1e-11}
        np.testing.assert_allclose(a, b, equal_nan=True, err_msg=what, **tol)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gpu_matches_cpu(case):
    if status(case)[0] != "ok":  # rejected, or reads undefined values: nothing to compare
        return
    cpu = case.build(REFERENCE)
    gpu = case.build("cuda", rebuild=True)  # not a module another test switched to the emulation
    args = case.inputs(cpu, np.random.default_rng(11))
    ref, out = copy.deepcopy(args), copy.deepcopy(args)
    try:
        cpu(**ref)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            gpu(**out)
        return
    gpu(**out)
    for k, v in ref.items():
        if isinstance(v, np.ndarray):
            _close(out[k], v, f"{case.name}: {k!r} on the GPU vs the {REFERENCE} backend")


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_gpu_arrays_are_used_in_place(lib):
    if importlib.util.find_spec(lib) is None:
        pytest.skip(f"needs a GPU array library: {lib} is not installed")
    mod = importlib.import_module(lib)
    host = np.random.default_rng(1).uniform(-1, 1, (33, 17, 9))
    if lib == "cupy":
        inp, out = mod.asarray(host), mod.zeros(host.shape)
        back = mod.asnumpy
    else:
        inp, out = mod.tensor(host, device="cuda"), mod.zeros(host.shape, dtype=mod.float64, device="cuda")
        back = lambda t: t.cpu().numpy()  # noqa: E731
    gtscript.stencil("cuda", copy_defn, rebuild=True)(inp, out)
    np.testing.assert_array_equal(back(out), host)


def test_calls_on_a_stream_of_the_driver():
    """stream= on a real GPU: a non-blocking stream made with the driver API (in the primary
    context the backend uses, current on this thread after a first call)."""
    import ctypes
    st = gtscript.stencil("cuda", copy_defn, rebuild=True)
    host = np.random.default_rng(3).uniform(-1, 1, (33, 17, 5))
    out = np.zeros_like(host)
    st(host, out)
    driver = ctypes.CDLL("libcuda.so.1")
    stream = ctypes.c_void_p()
    assert driver.cuStreamCreate(ctypes.byref(stream), 1) == 0  # CU_STREAM_NON_BLOCKING
    try:
        out[...] = 0.0
        st(host, out, stream=stream.value)
        np.testing.assert_array_equal(out, host)  # synchronised before the call returned
        out[...] = 0.0
        st(host, out, stream=type("Handle", (), {"handle": stream})())
        np.testing.assert_array_equal(out, host)
    finally:
        driver.cuStreamDestroy_v2(stream)
