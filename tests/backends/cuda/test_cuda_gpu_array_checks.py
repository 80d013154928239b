"""GPU arrays (__cuda_array_interface__) on the cuda backend, for stencils whose calls are
checked against field values: variable K offsets, absolute K indices (.at(K=...)), data
indices and interval bounds computed from fields (checked on host copies of the GPU arrays
those values come from), and K levels computed from values the stencil writes (checked by
the kernels, a failed call undone from device copies of the written arrays). On the host
emulation, whose "device memory" is host memory: every result and every error must be the
numpy backend's on NumPy arrays, and a failed call leaves every array unchanged."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gtscript
from cuda_emulation.registry import cases, status
from cuda_emulation.runner import compiler, emulate
from test_interval_field_bounds import up_to_top
from test_language_absolute_k import field_index_defn
from test_language_runtime import remap, remap_inputs, remap_reference

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C compiler for the emulation")

SENTINEL = -777.25


class DeviceArray:
    """Only __cuda_array_interface__, over host memory (the emulated device's memory)."""

    def __init__(self, host, readonly=False):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str, "version": 3,
            "data": (host.__array_interface__["data"][0], readonly),
            "strides": host.strides, "stream": None,
        }


def with_margins(a, margin=2):
    """A copy of `a` inside a larger sentinel-filled buffer (returns the buffer, the view)."""
    pad = [(margin, margin)] * a.ndim
    big = np.pad(a, pad, constant_values=a.dtype.type(SENTINEL if a.dtype.kind == "f" else -77))
    inner = big[tuple(slice(margin, margin + n) for n in a.shape)]
    return big, inner


def cuda(defn, **kw):
    return emulate(gtscript.stencil("cuda", defn, rebuild=True, **kw))


SHAPES = ["test_language_absolute_k.data_index_defn", "test_language_absolute_k.field_index_defn",
          "test_language_absolute_k.scalar_index_defn", "test_language_absolute_k.surface_anomaly_defn",
          "test_gt4py_compat.k_sweeps", "test_language_runtime.remap"]
CASES = [c for c in cases() if c.name.split("[")[0] in SHAPES]


def test_every_shape_is_found():
    assert len(CASES) == 10, [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gpu_arrays_give_the_numpy_backends_results(case):
    assert status(case)[0] == "ok"
    ref_st = case.build("numpy")
    gpu = emulate(case.build("cuda", rebuild=True))
    args = case.inputs(ref_st, np.random.default_rng(5))
    if case.name.startswith("test_language_runtime.remap"):  # levels that stay in the arrays
        args["pe1"], args["pe2"], args["q1"] = remap_inputs(np.random.default_rng(5), case.shape)
        args["top"] = case.shape[2] - 2
    ref, run = copy.deepcopy(args), copy.deepcopy(args)
    bufs = {k: with_margins(v) for k, v in run.items() if isinstance(v, np.ndarray)}
    try:
        ref_st(**ref)
        error = None
    except (ValueError, IndexError) as e:
        error = e
    dev = {k: (DeviceArray(bufs[k][1]) if k in bufs else v) for k, v in run.items()}
    before = {k: b[0].copy() for k, b in bufs.items()}
    if error is not None:  # the same refusal, nothing written
        with pytest.raises(type(error)) as info:
            gpu(**dev)
        assert str(info.value) == str(error)
        for k, (big, _) in bufs.items():
            np.testing.assert_array_equal(big, before[k], err_msg=k)
        return
    gpu(**dev)
    for k, (big, inner) in bufs.items():
        np.testing.assert_allclose(inner, ref[k], rtol=1e-6, atol=1e-6, err_msg=k)
        mask = np.ones(big.shape, bool)
        mask[tuple(slice(2, 2 + n) for n in inner.shape)] = False
        np.testing.assert_array_equal(big[mask], before[k][mask], err_msg=f"{k}: margins")


def _assert_same_failure(defn, args, scalars, expected_type):
    """numpy on NumPy arrays and cuda on GPU arrays raise the same error; nothing changes."""
    ref = {k: v.copy() for k, v in args.items()}
    with pytest.raises(expected_type) as ref_info:
        gtscript.stencil("numpy", defn)(**ref, **scalars)
    bufs = {k: with_margins(v) for k, v in args.items()}
    before = {k: b[0].copy() for k, b in bufs.items()}
    with pytest.raises(expected_type) as info:
        cuda(defn)(**{k: DeviceArray(b[1]) for k, b in bufs.items()}, **scalars)
    assert str(info.value) == str(ref_info.value)
    for k, (big, _) in bufs.items():
        np.testing.assert_array_equal(big, before[k], err_msg=k)
    return str(info.value)


def test_a_level_read_outside_the_domain_undoes_the_call_on_gpu_arrays():
    shape = (9, 7, 6)
    rng = np.random.default_rng(7)
    pe1, pe2, q1 = remap_inputs(rng, shape)
    # first a call that succeeds, then one whose loop walks pe1.at(K=kk + 1) to level nk
    q2 = np.full(shape, 1234.5)
    st = cuda(remap)
    st(DeviceArray(pe1), DeviceArray(pe2), DeviceArray(q1), DeviceArray(q2), top=shape[2] - 2)
    np.testing.assert_allclose(q2, remap_reference(pe1, pe2, q1, np.full(shape, 1234.5), shape[2] - 2))
    pe2[4, 5, -1] = pe1[4, 5, -1] + 1.0
    message = _assert_same_failure(remap, {"pe1": pe1, "pe2": pe2, "q1": q1, "q2": q2},
                                   {"top": shape[2] - 1}, ValueError)
    assert "every array it wrote was restored" in message


def test_a_level_read_outside_the_domain_undoes_host_and_gpu_arrays_together():
    shape = (9, 7, 6)
    pe1, pe2, q1 = remap_inputs(np.random.default_rng(8), shape)
    pe2[1, 2, -1] = pe1[1, 2, -1] + 1.0
    q2_big, q2 = with_margins(np.full(shape, 5.5))
    before = q2_big.copy()
    with pytest.raises(ValueError, match="every array it wrote was restored"):
        cuda(remap)(pe1, DeviceArray(pe2), q1, DeviceArray(q2), top=shape[2] - 1)
    np.testing.assert_array_equal(q2_big, before)


def test_a_field_computed_level_outside_the_array_is_refused_before_running():
    dt = np.float64
    shape = (6, 5, 7)
    rng = np.random.default_rng(3)
    f, out = rng.uniform(-1, 1, shape), np.full(shape, 3.0)
    idx = rng.integers(-3, 4, shape).astype(np.int32)
    top = rng.integers(1, shape[2], shape[:2]).astype(np.int64)
    idx[2, 3, 4] = shape[2]  # f.at(K=abs(idx)) reads level nk
    message = _assert_same_failure(field_index_defn(dt), {"f": f, "idx": idx, "top": top, "out": out}, {},
                                   (ValueError, IndexError))
    assert "'f'" in message


def test_an_ij_field_interval_bound_outside_the_domain_is_refused_on_gpu_arrays():
    shape = (5, 6, 7)
    rng = np.random.default_rng(4)
    a, out = rng.uniform(-1, 1, shape), np.full(shape, 2.0)
    top = rng.integers(0, shape[2] - 1, shape[:2])
    top[3, 2] = shape[2]
    message = _assert_same_failure(up_to_top, {"a": a, "top": top, "out": out}, {"domain": (5, 6, 6)}, ValueError)
    assert "argument 'top': the interval bound" in message
    top[3, 2] = 6  # inside: it runs, as on NumPy arrays
    ref = out.copy()
    gtscript.stencil("numpy", up_to_top)(a, top, ref, domain=(5, 6, 6))
    cuda(up_to_top)(DeviceArray(a), DeviceArray(top), DeviceArray(out), domain=(5, 6, 6))
    np.testing.assert_array_equal(out, ref)


# ===================== the GPU code path on a stand-in driver (tests/cuda_fake_driver)

FAKE_SCRIPT = textwrap.dedent(r'''
    import ctypes, json, sys
    import numpy as np
    import gtscript
    from gtscript import FORWARD, IJ, PARALLEL, Field, computation, interval

    def field_index(f: Field[np.float64], idx: Field[np.int32], top: Field[IJ, np.int64],
                    out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = f.at(K=abs(idx)) - f.at(K=abs(top - 1))

    def remap(pe1: Field[np.float64], pe2: Field[np.float64], q1: Field[np.float64],
              q2: Field[np.float64], top: int):
        with computation(FORWARD), interval(...):
            kk = 0
            while pe1.at(K=kk + 1) < pe2 and kk < top:
                kk = kk + 1
            q2 = q1.at(K=kk) + (pe2 - pe1.at(K=kk)) * (q1.at(K=kk + 1) - q1.at(K=kk))

    # the cubins come from the disk cache, where a first run without the stand-in put them
    fi = gtscript.stencil("cuda", field_index, gpu_arch="sm_80")
    rm = gtscript.stencil("cuda", remap, gpu_arch="sm_80")
    if sys.argv[1] != "fake":
        sys.exit(0)
    drv = ctypes.CDLL("libcuda.so.1")
    drv.fake_log.restype = ctypes.c_char_p
    drv.fake_on_launch.argtypes = [ctypes.c_longlong, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]

    def Dev(host):
        class D:
            __cuda_array_interface__ = {"shape": host.shape, "typestr": host.dtype.str, "version": 3,
                                        "data": (host.__array_interface__["data"][0], False),
                                        "strides": host.strides, "stream": None}
        return D()

    def log():
        return [ln for ln in drv.fake_log().decode().splitlines()]

    def attempt(fn):
        drv.fake_clear()
        try:
            fn()
            return None, log()
        except ValueError as e:
            return str(e), log()

    rng = np.random.default_rng(1)
    shape = (6, 5, 7)
    f, out = rng.uniform(-1, 1, shape), np.zeros(shape)
    idx = rng.integers(-6, 7, shape).astype(np.int32)
    top = rng.integers(1, 8, shape[:2]).astype(np.int64)
    res = {"good": attempt(lambda: fi(Dev(f), Dev(idx), Dev(top), Dev(out)))}
    idx[2, 3, 4] = -7  # abs(idx) == nk
    res["bad"] = attempt(lambda: fi(Dev(f), Dev(idx), Dev(top), Dev(out)))
    res["numpy"] = attempt(lambda: gtscript.stencil("numpy", field_index)(f, idx, top, out.copy()))[0]

    pe1, pe2, q1, q2 = (rng.uniform(0, 1, shape) for _ in range(4))
    before = q2.copy()
    # a kernel that writes q2 and notes a read of pe1 (argument 0) outside its levels on line 3
    drv.fake_on_launch((1 << 32) | 3, 1, q2.ctypes.data, q2.nbytes)
    res["undone"] = attempt(lambda: rm(Dev(pe1), Dev(pe2), Dev(q1), Dev(q2), top=5))
    res["restored"] = bool(np.array_equal(q2, before))
    drv.fake_on_launch(0, 1, q2.ctypes.data, q2.nbytes)  # the same writes, nothing noted: they stay
    res["kept"] = attempt(lambda: rm(Dev(pe1), Dev(pe2), Dev(q1), Dev(q2), top=5))
    res["written"] = bool((q2.view(np.uint8) == 0x5a).all())
    print(json.dumps(res))
''')


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("needs a C compiler for the stand-in driver")
    d = tmp_path_factory.mktemp("fakecuda")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(d / "libcuda.so.1"),
                    str(Path(__file__).resolve().parents[2] / "cuda_fake_driver" / "fake_libcuda.c")], check=True)
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(d / "cache"))
    (d / "calls.py").write_text(FAKE_SCRIPT)
    r = subprocess.run([sys.executable, str(d / "calls.py"), "build"], env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0 and "NVRTC" in r.stderr:
        pytest.skip("needs NVRTC to build the cubins")
    assert r.returncode == 0, r.stderr
    env["LD_LIBRARY_PATH"] = f"{d}:{os.environ.get('LD_LIBRARY_PATH', '')}"
    r = subprocess.run([sys.executable, str(d / "calls.py"), "fake"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_gpu_path_copies_only_the_index_fields_to_the_host_for_the_check(fake_driver):
    error, log = fake_driver["good"]
    assert error is None, error
    copies = [ln for ln in log if ln.startswith("cuMemcpyDtoHAsync")]
    first_launch = log.index(next(ln for ln in log if ln.startswith("cuLaunchKernel")))
    # idx: 6 * 5 * 7 int32 (840 bytes), top: 6 * 5 int64 (240 bytes); never f or out (1680)
    assert sorted(copies[:2]) == ["cuMemcpyDtoHAsync 348", "cuMemcpyDtoHAsync f0"], log
    assert "cuMemcpyDtoHAsync 690" not in log
    assert all(log.index(c) < first_launch for c in copies[:2])


def test_gpu_path_refuses_a_field_computed_level_as_numpy_does(fake_driver):
    error, log = fake_driver["bad"]
    assert error is not None and error == fake_driver["numpy"], (error, fake_driver["numpy"])
    assert not any(ln.startswith("cuLaunchKernel") for ln in log)


def test_gpu_path_undoes_a_call_whose_kernel_notes_a_level_outside(fake_driver):
    error, log = fake_driver["undone"]
    assert error is not None
    for word in ("argument 'pe1'", "line 3", "every array it wrote was restored"):
        assert word in error, (word, error)
    assert fake_driver["restored"]
    saves = [i for i, ln in enumerate(log) if ln == "cuMemcpyDtoDAsync 690"]  # q2: 1680 bytes
    launches = [i for i, ln in enumerate(log) if ln.startswith("cuLaunchKernel")]
    assert len(saves) == 2 and saves[0] < launches[0] and saves[1] > launches[-1], log
    error, log = fake_driver["kept"]
    assert error is None and fake_driver["written"]
    assert log.count("cuMemcpyDtoDAsync 690") == 1  # the save, no restore
