"""What a cuda call does on the host, counted on a stand-in CUDA driver that records driver
calls and runs nothing (tests/cuda_fake_driver): the GPU call path's code, without a GPU.
A repeated call on GPU arrays allocates and frees nothing, copies no unchanged argument
block, never synchronises the whole context when the arrays' producer names its stream, and
synchronises its own stream once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
CC = shutil.which("cc") or shutil.which("gcc")

SCRIPT = textwrap.dedent(r'''
    import ctypes, json, sys
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    FAKE = sys.argv[1] == "fake"
    if FAKE:
        drv = ctypes.CDLL("libcuda.so.1")
        drv.fake_log.restype = ctypes.c_char_p

    def copy_defn(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp

    def temp_defn(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            t = inp[1, 0, 0] + inp[-1, 0, 0]
            out = t[1, 0, 0] + t[-1, 0, 0]

    class Dev:
        def __init__(self, host, stream):
            self.host = host
            cai = {"shape": host.shape, "typestr": host.dtype.str, "version": 3,
                   "data": (host.__array_interface__["data"][0], False), "strides": host.strides}
            if stream != "absent":
                cai["stream"] = stream
            self.__cuda_array_interface__ = cai

    def calls(defn, producer, stream=None, n=2):
        # the cubin comes from the disk cache, where a first run without the stand-in put it
        # (NVRTC does not run beside the stand-in driver)
        st = gtscript.stencil("cuda", defn, gpu_arch="sm_80")
        if not FAKE:
            return None
        a, b = np.ones((16, 8, 4), order="F"), np.zeros((16, 8, 4), order="F")
        logs = []
        for _ in range(n):
            drv.fake_clear()
            st(Dev(a, producer), Dev(b, producer), origin=(2, 2, 0), domain=(12, 4, 4), stream=stream)
            logs.append([ln.split()[0] + ("" if ln.split()[1] == "0" else " " + ln.split()[1])
                         for ln in drv.fake_log().decode().splitlines()])
        return logs

    out = {
        "legacy": calls(copy_defn, 1),
        "same": calls(copy_defn, 0x5000, stream=0x5000),
        "other": calls(copy_defn, 0x5000),
        "none": calls(copy_defn, None),
        "absent": calls(copy_defn, "absent"),
        "temps": calls(temp_defn, 1),
    }
    if FAKE:
        print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def driver_log(tmp_path_factory):
    if CC is None:
        pytest.skip("needs a C compiler for the stand-in driver")
    d = tmp_path_factory.mktemp("fakecuda")
    subprocess.run([CC, "-shared", "-fPIC", "-O1", "-o", str(d / "libcuda.so.1"),
                    str(TESTS / "cuda_fake_driver" / "fake_libcuda.c")], check=True)
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(d / "cache"))
    (d / "calls.py").write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(d / "calls.py"), "build"], env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0 and "NVRTC" in r.stderr:
        pytest.skip("needs NVRTC to build the cubin")
    assert r.returncode == 0, r.stderr
    env["LD_LIBRARY_PATH"] = f"{d}:{os.environ.get('LD_LIBRARY_PATH', '')}"
    r = subprocess.run([sys.executable, str(d / "calls.py"), "fake"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    import json
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_repeated_call_on_legacy_stream_arrays_is_one_launch_and_one_stream_sync(driver_log):
    first, second = driver_log["legacy"]
    assert "cuCtxSynchronize" not in first + second
    assert second == ["cuLaunchKernel", "cuStreamSynchronize"], second
    assert first.count("cuLaunchKernel") == 1
    assert any(c.startswith("cuMemcpyHtoDAsync") for c in first)  # the argument block, once


def test_a_producer_on_the_calls_own_stream_needs_no_wait(driver_log):
    second = driver_log["same"][1]
    assert second == ["cuLaunchKernel 5000", "cuStreamSynchronize 5000"], second


def test_a_producer_on_another_stream_is_waited_for_with_an_event(driver_log):
    for log in driver_log["other"]:
        assert "cuCtxSynchronize" not in log
        i = log.index("cuEventRecord 5000")
        assert log[i + 1] == "cuStreamWaitEvent"  # the call's (default) stream waits
        assert log.index("cuLaunchKernel") > i + 1


def test_a_producer_that_says_no_stream_or_names_none(driver_log):
    assert driver_log["none"][1] == ["cuLaunchKernel", "cuStreamSynchronize"]
    for log in driver_log["absent"]:  # an older producer: the whole context, before the launch
        assert log.index("cuCtxSynchronize") < log.index("cuLaunchKernel")


def test_temporaries_keep_their_device_buffers_between_calls(driver_log):
    first, second = driver_log["temps"]
    assert any(c.startswith("cuMemAlloc") for c in first)
    assert not any(c.startswith(("cuMemAlloc", "cuMemFree", "cuCtxSynchronize")) for c in second), second
    assert second.count("cuStreamSynchronize") == 1
