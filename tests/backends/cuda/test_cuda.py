"""The cuda backend without a GPU: every stencil of the suite compiles with NVRTC to PTX for
sm_80 and sm_90, and the exact CUDA source NVRTC compiles, built by the host C compiler
against an emulation header (real threads per block, __syncthreads() a real barrier), gives
the cpu backend's results through the whole cuda call path. Tests that need a GPU run only
when the CUDA driver finds one (tests/backends/cuda/test_cuda_gpu.py)."""

from __future__ import annotations

import copy
import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import gtscript
from gtscript import BACKWARD, FORWARD, PARALLEL, Field, I, J, computation, horizontal, interval, region
from cuda_emulation.registry import cases, status
from cuda_emulation.runner import build as build_emulation
from cuda_emulation.runner import compiler, emulate

CASES = cases()
ARCHS = ("sm_80", "sm_90")
IDS = [c.name for c in CASES]

pytestmark = pytest.mark.skipif(compiler() is None, reason="no host C compiler for the emulation")


def cuda(defn, block=(4, 2), reverse=False, **kw):
    """A cuda stencil running on the host emulation (small blocks: many blocks and halos)."""
    return emulate(gtscript.stencil("cuda", defn, **kw), block, reverse)


def assert_same(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, what
    if actual.dtype.kind == "f":
        tol = {"rtol": 1e-6, "atol": 1e-6} if actual.dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-13}
        np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=what, **tol)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def compare_with_cpu(case_or_pair, make_args, call_kwargs=None, layout=None, block=(4, 2), **build):
    """Runs the cpu backend and the emulated cuda backend (its blocks in increasing, then in
    decreasing order) on copies of the same arguments and compares every array afterwards;
    returns the cuda results."""
    defn, externals = case_or_pair
    args = make_args(gtscript.stencil("cpu", defn, externals=externals, **build))
    for reverse in (False, True):
        result = _compare_once(defn, externals, args, call_kwargs, layout, block, reverse, build)
    return result


def _compare_once(defn, externals, args, call_kwargs, layout, block, reverse, build):
    cpu = gtscript.stencil("cpu", defn, externals=externals, **build)
    gpu = cuda(defn, block=block, reverse=reverse, externals=externals, **build)
    results = {}
    for name, st in (("cpu", cpu), ("cuda", gpu)):
        run = copy.deepcopy(args)
        if layout is not None:
            run = {k: (relayout(v, layout) if isinstance(v, np.ndarray) else v) for k, v in run.items()}
        try:
            st(**run, **(call_kwargs or {}))
        except (ValueError, TypeError) as e:  # the same validation must reject the same call
            results[name] = e
            continue
        results[name] = run
    if isinstance(results["cpu"], Exception) or isinstance(results["cuda"], Exception):
        assert type(results["cpu"]) is type(results["cuda"]) and str(results["cpu"]) == str(results["cuda"])
        return None
    for k, v in args.items():
        if isinstance(v, np.ndarray):
            assert_same(results["cuda"][k], results["cpu"][k],
                        f"argument {k!r}: cuda (emulated, blocks {'reversed' if reverse else 'in order'}) vs cpu")
    return results["cuda"]


def relayout(a, layout):
    if layout == "C" or a.ndim < 2:
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "strided":
        big = np.zeros(tuple(2 * n for n in a.shape), a.dtype)
        view = big[tuple(slice(None, None, 2) for _ in a.shape)]
        view[...] = a
        return view
    if layout == "kij" and a.ndim == 3:
        return np.ascontiguousarray(np.moveaxis(a, 2, 0)).transpose(1, 2, 0)
    return np.ascontiguousarray(a)


# ============================================================================ NVRTC and PTX

def rejected_alike(case) -> bool:
    """For a definition the cpu backend rejects: the cuda backend raises the same error."""
    kind, error = status(case)
    if kind != "rejected":
        return False
    with pytest.raises(type(error)) as info:
        case.build("cuda")
    assert str(info.value) == str(error)
    return True


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_stencil_compiles_to_ptx(case):
    if rejected_alike(case):
        return
    st = case.build("cuda")
    names = [k["name"] for k in st._cuda_info()["kernels"]]
    assert names, "no kernel was generated"
    with ThreadPoolExecutor(2) as pool:  # NVRTC runs without the GIL
        ptxs = dict(zip(ARCHS, pool.map(st._cuda_ptx, ARCHS)))
    for arch, ptx in ptxs.items():
        assert f".target {arch}" in ptx, f"PTX for {arch} has no .target line"
        for name in names:
            assert re.search(rf"\.entry\s+{re.escape(name)}\s*\(", ptx), f"{name} missing from the PTX for {arch}"


def test_source_is_the_cuda_c_given_to_nvrtc():
    st = gtscript.stencil("cuda", _spine("hdiff_defn"))
    src = st.source()
    assert "GT_KERNEL void" in src and "__global__" in src
    for k in st._cuda_info()["kernels"]:
        assert f"GT_KERNEL void {k['name']}(" in src
    assert st.build_info["backend"] == "cuda" and st.build_info["target"] == "sm_90"


# ============================================================ emulation: the whole suite

@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_emulation_matches_cpu(case):
    if rejected_alike(case):
        return
    rng = np.random.default_rng(7)
    if status(case)[0] == "undefined":  # reads values nothing wrote: only that it runs
        st = cuda(case.definition, externals=case.externals)
        args = case.inputs(st, rng)
        st(**args)
        return
    compare_with_cpu((case.definition, case.externals), lambda cpu: case.inputs(cpu, rng))


# ===================================================== emulation: layouts and block shapes

def _spine(name):
    import test_backend_agreement
    return getattr(test_backend_agreement, name)


def _fields(*names, shape=(12, 10, 8), seed=3):
    rng = np.random.default_rng(seed)

    def make(_cpu):
        return {n: rng.uniform(-1.0, 1.0, shape) for n in names}
    return make


@pytest.mark.parametrize("layout", ["C", "F", "strided", "kij"])
@pytest.mark.parametrize("defn, names", [
    ("hdiff_defn", ("inp", "coeff", "out")),
    ("lap_lap_written_defn", ("inp", "out")),
    ("forward_extended_defn", ("inp", "out")),
], ids=["hdiff", "lap_lap", "forward_extended"])
def test_layouts_decide_the_thread_mapping(defn, names, layout):
    compare_with_cpu((_spine(defn), None), _fields(*names), layout=layout)


@pytest.mark.parametrize("block", [(1, 1), (3, 2), (2, 5), (32, 8)])
def test_block_shapes_including_halos_wider_than_a_tile(block):
    compare_with_cpu((_spine("hdiff_defn"), None), _fields("inp", "coeff", "out"), block=block)
    compare_with_cpu((_spine("lap_lap_function_defn"), None), _fields("inp", "out"), block=block)


@pytest.mark.parametrize("origin, domain", [((2, 2, 0), (8, 6, 8)), ((3, 4, 1), (5, 3, 5)), ((2, 2, 3), (1, 1, 1))])
def test_explicit_origin_and_domain(origin, domain):
    compare_with_cpu((_spine("hdiff_defn"), None), _fields("inp", "coeff", "out"),
                     call_kwargs={"origin": origin, "domain": domain}, block=(3, 2))


def test_thomas_solver_in_k_is_exact_on_every_layout():
    import test_backend_agreement
    for layout in ("C", "F", "kij"):
        fm = type("F", (), {"rng": np.random.default_rng(5), "as_layout": staticmethod(lambda v, lay: v)})
        a, b, c, d = test_backend_agreement.thomas_inputs(fm)
        compare_with_cpu((test_backend_agreement.thomas_defn, None),
                         lambda _cpu: {"a": a, "b": b, "c": c, "d": d, "x": np.zeros_like(a)}, layout=layout)


# ============================================ the plan: shared memory, registers, kernels

def test_offset_temporaries_live_in_shared_memory_and_point_ones_in_registers():
    # with on-the-fly recomputation off, every temporary needs storage of its own kind
    stored = {"inline_temporaries": 0}
    info = gtscript.stencil("cuda", _spine("hdiff_defn"), **stored)._cuda_info()
    assert info["storage"] == {"lap_f": "shared", "res": "register", "flx": "shared", "fly": "shared"}
    assert len(info["kernels"]) == 1 and info["kernels"][0]["shared_bytes"] > 0
    src = gtscript.stencil("cuda", _spine("hdiff_defn"), **stored).source()
    assert src.count("__syncthreads();") >= 2
    thomas = gtscript.stencil("cuda", _spine("thomas_defn"), **stored)._cuda_info()
    assert thomas["storage"] == {"cp": "global", "dp": "global"}  # read at K - 1
    assert [k["computation"] for k in thomas["kernels"]] == [0, 1]


def test_short_temporaries_are_computed_on_the_fly_by_default():
    info = gtscript.stencil("cuda", _spine("hdiff_defn"))._cuda_info()
    assert set(info["storage"].values()) <= {"unused", "register"}
    compare_with_cpu((_spine("hdiff_defn"), None), _fields("inp", "coeff", "out", shape=(12, 11, 5)))


def test_loads_are_grouped_before_arithmetic():
    src = gtscript.stencil("cuda", _spine("laplacian_defn")).source()
    body = src[src.index("GT_KERNEL void"):]
    lines = [ln.strip() for ln in body.splitlines() if "f_inp[" in ln or "f_out[" in ln]
    loads = [i for i, ln in enumerate(lines) if ln.startswith("const double")]
    store = [i for i, ln in enumerate(lines) if ln.startswith("f_out[")]
    assert len(loads) == 5 and store == [5], lines


def test_declarations_are_hoisted_and_names_never_clash():
    # fields named like the kernel's own variables and like each other's strides
    def clash(i: Field[np.float64], k: Field[np.float64], a_si: Field[np.float64], a: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            ii = i[1, 0, 0] + k
            a = ii + a_si
    st = cuda(clash)
    src = st.source()
    kernel = src[src.index("GT_KERNEL void"):]
    decls = re.findall(r"^    [a-z][\w *]*?(\w+) = ", kernel, re.M)  # the kernel's own block
    assert len(decls) > 10 and len(decls) == len(set(decls)), decls
    assert "f_a_si_1 = gt_strides[" in src  # field a's I stride, renamed away from field a_si
    loop = src.index("for (long long k")
    assert "gt_strides[" not in src[loop:], "strides must be loaded once, before the loops"
    compare_with_cpu((clash, None), _fields("i", "k", "a_si", "a", shape=(6, 5, 3)))


def forward_then_offset_defn(inp: Field[np.float64], f: Field[np.float64], g: Field[np.float64]):
    with computation(FORWARD), interval(...):
        f = f + inp          # not idempotent: must run once per point, also in the halo
        g = f[1, 0, 0] - f[-1, 0, 0] + f[0, 1, 0]


def parallel_field_then_offset_defn(inp: Field[np.float64], f: Field[np.float64], g: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        f = f * 2.0 + inp
        g = f[1, 0, 0] + f[0, -1, 0]


def test_field_written_then_read_with_offset_splits_the_kernel():
    fwd = gtscript.stencil("cuda", forward_then_offset_defn)._cuda_info()["kernels"]
    assert len(fwd) == 2 and all(k["per_level"] for k in fwd)  # FORWARD: launched level by level
    par = gtscript.stencil("cuda", parallel_field_then_offset_defn)._cuda_info()["kernels"]
    assert len(par) == 2 and not any(k["per_level"] for k in par)
    for defn in (forward_then_offset_defn, parallel_field_then_offset_defn):
        for block in ((3, 2), (32, 8)):
            compare_with_cpu((defn, None), _fields("inp", "f", "g", shape=(9, 7, 4)), block=block)


def k_dependency_defn(inp: Field[np.float64], mid: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = inp * 3.0
        mid = t[1, 0, 0] + inp
        out = mid[0, 0, 1] - mid[0, 0, -1] + t[0, 0, 0]


def test_parallel_k_offset_read_of_a_written_field_splits_the_kernel():
    info = gtscript.stencil("cuda", k_dependency_defn, inline_temporaries=0)._cuda_info()
    assert len(info["kernels"]) == 2
    assert info["storage"]["t"] == "global"  # used by both kernels
    compare_with_cpu((k_dependency_defn, None), _fields("inp", "mid", "out"),
                     call_kwargs={"origin": (0, 0, 1), "domain": (11, 10, 6)})


def k_war_defn(inp: Field[np.float64], a: Field[np.float64], b: Field[np.float64]):
    with computation(PARALLEL), interval(1, None):
        b = a[0, 0, -1] + inp  # the values of a from before the call
        a = inp * 2.0


def test_parallel_write_after_a_k_offset_read_starts_a_new_kernel():
    assert len(gtscript.stencil("cuda", k_war_defn)._cuda_info()["kernels"]) == 2
    result = compare_with_cpu((k_war_defn, None), _fields("inp", "a", "b", shape=(5, 4, 7)))
    np.testing.assert_array_equal(result["a"][:, :, 1:], result["inp"][:, :, 1:] * 2.0)


def backward_region_defn(a: Field[np.float64], out: Field[np.float64], s: float):
    with computation(BACKWARD), interval(...):
        t = a * s
        with horizontal(region[I[0], :], region[:, J[-1]]):
            out = t[1, 0, 0] + 1.0
        if a > 0.0:
            out = out + t[0, 1, 0]


def test_regions_and_conditions_in_backward_with_shared_temporaries():
    compare_with_cpu((backward_region_defn, None),
                     lambda cpu: {"a": np.random.default_rng(1).uniform(-1, 1, (9, 8, 5)),
                                  "out": np.zeros((9, 8, 5)), "s": 1.5})


# ========================================================= arrays from other libraries

class DeviceArray:
    """An array that only exposes __cuda_array_interface__ (as CuPy, PyTorch and Numba do);
    here over host memory, which is what "device memory" is on the emulated device."""

    def __init__(self, host, readonly=False):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape, "typestr": host.dtype.str, "version": 3,
            "data": (host.__array_interface__["data"][0], readonly),
            "strides": None if host.flags.c_contiguous else host.strides,
        }


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_cuda_array_interface_is_used_in_place_with_its_strides(layout):
    st = cuda(_spine("lap_lap_written_defn"))
    rng = np.random.default_rng(2)
    inp = relayout(rng.uniform(-1, 1, (12, 10, 8)), layout)
    out = relayout(np.full((12, 10, 8), 7.0), layout)
    ref = out.copy()
    gtscript.stencil("cpu", _spine("lap_lap_written_defn"))(inp, ref)
    st(DeviceArray(inp, readonly=True), DeviceArray(out))
    assert_same(out, ref, "written in place through __cuda_array_interface__")


def test_cuda_array_interface_is_validated_like_numpy_arrays():
    st = cuda(_spine("copy_defn"))
    a = np.zeros((4, 4, 4))
    with pytest.raises(ValueError, match="'out' is written by the stencil but is read-only"):
        st(DeviceArray(a), DeviceArray(np.zeros((4, 4, 4)), readonly=True))
    with pytest.raises(TypeError, match="'inp' has dtype float32"):
        st(DeviceArray(a.astype(np.float32)), DeviceArray(a))
    with pytest.raises(ValueError, match="'inp' must have 3 dimensions"):
        st(DeviceArray(a[0]), DeviceArray(a))

    class Broken:
        __cuda_array_interface__ = {"shape": (4, 4, 4)}
    with pytest.raises(TypeError, match="invalid __cuda_array_interface__"):
        st(Broken(), DeviceArray(a))


def test_aliased_numpy_arguments_share_one_device_copy():
    def inc(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            a = a + 1.0
            c = b * 2.0  # b is a: reads the new value, as on the cpu
    st = cuda(inc)
    x, c = np.ones((5, 4, 3)), np.zeros((5, 4, 3))
    st(x, x[...], c)  # the same memory twice (point-wise, which validation allows)
    assert_same(x, np.full((5, 4, 3), 2.0), "a")
    assert_same(c, np.full((5, 4, 3), 4.0), "c read the aliased, updated values")


def test_exec_info_reports_the_cuda_run():
    st = cuda(_spine("copy_defn"))
    info = {}
    st(np.ones((3, 3, 3)), np.zeros((3, 3, 3)), exec_info=info)
    assert info["backend"] == "cuda" and info["device"] == "host emulation"
    assert info["run_end_time"] >= info["run_start_time"]


# ================================================================== options and errors

def test_no_gpu_is_a_clear_runtime_error():
    st = gtscript.stencil("cuda", _spine("copy_defn"), rebuild=True)
    try:
        st(np.ones((3, 3, 3)), np.zeros((3, 3, 3)))
    except RuntimeError as e:
        assert "no GPU" in str(e) and "copy_defn" in str(e)
    else:
        assert os.path.exists("/dev/nvidia0"), "ran without a GPU"


def test_gpu_arch_option_and_environment(monkeypatch):
    st = gtscript.stencil("cuda", _spine("copy_defn"), gpu_arch="sm_80", rebuild=True)
    if "no GPU" in _gpu_reason():
        assert st.build_info["target"] == "sm_80"
        monkeypatch.setenv("GTSCRIPT_GPU_ARCH", "sm_86")
        assert gtscript.stencil("cuda", _spine("scaled_add_defn"), rebuild=True).build_info["target"] == "sm_86"
        monkeypatch.setenv("GTSCRIPT_GPU_ARCH", "volta")
        with pytest.raises(ValueError, match="GTSCRIPT_GPU_ARCH must name a GPU architecture"):
            gtscript.stencil("cuda", _spine("scaled_add_defn"), rebuild=True)
    with pytest.raises(ValueError, match="gpu_arch must name"):
        gtscript.stencil("cuda", _spine("copy_defn"), gpu_arch="sm9", rebuild=True)
    with pytest.raises(ValueError, match="block_size"):
        gtscript.stencil("cuda", _spine("copy_defn"), block_size=(64, 32))


def _gpu_reason():
    st = gtscript.stencil("cuda", _spine("copy_defn"), block_size=(1, 1), rebuild=True)
    try:
        st(np.ones((1, 1, 1)), np.zeros((1, 1, 1)))
    except RuntimeError as e:
        return str(e)
    return ""


def test_without_nvrtc_import_and_cpu_work_and_cuda_says_what_was_looked_for(tmp_path):
    import ctypes.util
    if ctypes.util.find_library("nvrtc"):
        pytest.skip("NVRTC is installed on the system library path")
    import numpy
    site = os.path.dirname(os.path.dirname(numpy.__file__))
    shadow = tmp_path / "site"
    shadow.mkdir()
    for entry in os.listdir(site):
        if entry != "nvidia":
            os.symlink(os.path.join(site, entry), shadow / entry)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gtscript.__file__)))
    code = textwrap.dedent(f"""
        import sys
        sys.path = [p for p in sys.path if 'site-packages' not in p] + [{str(shadow)!r}, {root!r}]
        import numpy as np, gtscript
        from gtscript import Field, PARALLEL, computation, interval
        def copy(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = inp
        a, b = np.ones((2, 2, 2)), np.zeros((2, 2, 2))
        gtscript.stencil("cpu", copy)(a, b)
        assert (b == 1).all()
        try:
            gtscript.stencil("cuda", copy)
        except RuntimeError as e:
            print("ERROR:", e)
    """)
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    env["CUDA_HOME"] = str(tmp_path / "no-cuda")
    script = tmp_path / "no_nvrtc.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ERROR: the cuda backend needs NVRTC" in done.stdout
    assert "no-cuda/lib64 (CUDA_HOME)" in done.stdout and "pip install nvidia-cuda-nvrtc" in done.stdout


# ================================================================== the cubin on disk

CUDA_CACHE_SCRIPT = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval
    from cuda_emulation.runner import emulate

    @gtscript.stencil(backend="cuda", externals={"SCALE": 0.75})
    def diffuse(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SCALE
        with computation(PARALLEL), interval(...):
            tmp = inp[1, 0, 0] - inp[0, 0, 0]
            out = SCALE * (tmp - tmp[-1, 0, 0])

    compiles = diffuse._cuda_info()["nvrtc_compiles_in_process"]
    inp = np.random.default_rng(5).uniform(-1, 1, (9, 7, 4))
    out = np.full(inp.shape, 7.0)
    emulate(diffuse)(inp, out, origin=(1, 0, 0), domain=(7, 7, 4))
    np.save(sys.argv[1], out)
    print(json.dumps({"build_info": diffuse.build_info, "nvrtc_compiles": compiles,
                      "source_sha256": hashlib.sha256(diffuse.source().encode()).hexdigest()}))
""")


def _diffuse_reference(inp):
    """The script's stencil by hand: out = 0.75 * (tmp - tmp[-1]) with tmp = inp[1] - inp[0]."""
    out = np.full(inp.shape, 7.0)
    tmp = inp[1:, :, :] - inp[:-1, :, :]  # tmp at i = 0 .. 7
    out[1:8] = 0.75 * (tmp[1:8] - tmp[0:7])
    return out


def _run_cache_script(tmp_path, name):
    script = tmp_path / "cuda_cache_script.py"
    script.write_text(CUDA_CACHE_SCRIPT)
    tests_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = os.path.dirname(tests_dir)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tests_dir, root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script), str(tmp_path / name)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr, np.load(tmp_path / name)


def _cuda_entry_meta(entry):
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["key"] == entry.name and meta["backend"] == "cuda"
    for part, name in (("object", "kernel.cubin"), ("source", "kernel.cu")):
        data = (entry / name).read_bytes()
        assert meta[part]["file"] == name
        assert meta[part]["size"] == len(data) > 0
        assert meta[part]["sha256"] == hashlib.sha256(data).hexdigest()
    assert sorted(p.name for p in entry.iterdir()) == ["kernel.cu", "kernel.cubin", "meta.json"]
    return meta


def test_a_fresh_process_loads_the_cubin_from_disk_without_nvrtc(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(cache_dir))
    first, _, out1 = _run_cache_script(tmp_path, "a.npy")
    assert first["build_info"]["module_source"] == "build" and first["nvrtc_compiles"] >= 1
    entry = cache_dir / first["build_info"]["cache_key"]
    meta = _cuda_entry_meta(entry)
    assert meta["target"].startswith(f"cuda/{first['build_info']['target']}/nvrtc-")
    assert hashlib.sha256((entry / "kernel.cu").read_bytes()).hexdigest() == first["source_sha256"]

    second, stderr, out2 = _run_cache_script(tmp_path, "b.npy")
    assert "Warning" not in stderr, stderr
    assert second["build_info"]["module_source"] == "disk"
    assert second["nvrtc_compiles"] == 0  # the cubin came from disk: NVRTC never ran
    assert second["build_info"]["cache_key"] == first["build_info"]["cache_key"]
    assert second["source_sha256"] == first["source_sha256"]
    inp = np.random.default_rng(5).uniform(-1, 1, (9, 7, 4))
    np.testing.assert_array_equal(out2, out1)
    np.testing.assert_allclose(out2, _diffuse_reference(inp), rtol=1e-13, atol=1e-13)


def _cache_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        tmp = inp[1, 0, 0] - inp[0, 0, 0]
        out = SCALE * (tmp - tmp[-1, 0, 0])


def _redecorate(scale):
    """_cache_defn decorated again past the decorator's own table (which would return the
    very same object): the C core computes the key and asks its memory and disk levels."""
    stencil_module = sys.modules["gtscript.stencil"]
    with stencil_module._memory_lock:
        stencil_module._memory_cache.clear()
    return gtscript.stencil("cuda", _cache_defn, externals={"SCALE": scale})


_cache_scales = iter(range(1, 10**6))


def _fresh_cuda(**options):
    """A cuda stencil under a key no other test has built (the memory level outlives a test)."""
    scale = 1.0 + next(_cache_scales) / 1024.0 + os.getpid() % 997 / 1e6
    return scale, gtscript.stencil("cuda", _cache_defn, externals={"SCALE": scale}, **options)


def _check_cache_defn(st, scale):
    inp = np.random.default_rng(8).uniform(-1, 1, (9, 7, 4))
    out, ref = np.full(inp.shape, 7.0), np.full(inp.shape, 7.0)
    emulate(st)(inp, out, origin=(1, 0, 0), domain=(7, 7, 4))
    tmp = inp[1:] - inp[:-1]
    ref[1:8] = scale * (tmp[1:8] - tmp[0:7])
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-13)


def test_the_memory_level_and_an_in_process_disk_hit_skip_nvrtc(tmp_path, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    scale, st = _fresh_cuda()
    assert st.build_info["module_source"] == "build"
    compiles = st._cuda_info()["nvrtc_compiles_in_process"]
    again = _redecorate(scale)
    assert again is not st and again.cache_key == st.cache_key
    assert again.build_info["module_source"] == "memory" and again.source() == st.source()
    entry = tmp_path / "cache" / st.cache_key
    backup = tmp_path / "backup"
    shutil.copytree(entry, backup)
    gtscript.cache.clear()  # forget the memory level (and the disk entry, restored next)
    shutil.copytree(backup, entry)
    third = _redecorate(scale)
    assert third.build_info["module_source"] == "disk" and third.source() == st.source()
    assert third._cuda_info()["nvrtc_compiles_in_process"] == compiles
    _check_cache_defn(third, scale)


def _rewrite_cuda_meta(entry, **changes):
    meta = json.loads((entry / "meta.json").read_text())
    meta.update(changes)
    (entry / "meta.json").write_text(json.dumps(meta))


CUDA_CORRUPTIONS = {
    "garbage cubin": lambda e: (e / "kernel.cubin").write_bytes(
        np.random.default_rng(1).bytes((e / "kernel.cubin").stat().st_size)),
    "truncated cubin": lambda e: (e / "kernel.cubin").write_bytes((e / "kernel.cubin").read_bytes()[:64]),
    "edited source": lambda e: (e / "kernel.cu").write_text((e / "kernel.cu").read_text() + "\n// edited\n"),
    "files of another backend": lambda e: _rewrite_cuda_meta(
        e, object=dict(json.loads((e / "meta.json").read_text())["object"], file="kernel.o")),
    "wrong target": lambda e: _rewrite_cuda_meta(e, target="cuda/sm_10/nvrtc-1.0/block-32x8"),
    "cpu backend": lambda e: _rewrite_cuda_meta(e, backend="cpu"),
}


@pytest.mark.parametrize("corruption", list(CUDA_CORRUPTIONS))
def test_a_corrupted_cuda_entry_is_rebuilt_with_a_warning(corruption, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(cache_dir))
    scale, st = _fresh_cuda()
    entry = cache_dir / st.cache_key
    backup = tmp_path / "backup"
    shutil.copytree(entry, backup)
    gtscript.cache.clear()
    shutil.copytree(backup, entry)
    CUDA_CORRUPTIONS[corruption](entry)
    compiles = st._cuda_info()["nvrtc_compiles_in_process"]
    with pytest.warns(RuntimeWarning, match="ignoring the entry .* rebuilding it"):
        again = _redecorate(scale)
    assert again.build_info["module_source"] == "build"
    assert again._cuda_info()["nvrtc_compiles_in_process"] == compiles + 1
    assert again.source() == st.source()
    _cuda_entry_meta(entry)  # replaced by a good one
    _check_cache_defn(again, scale)


def test_arch_block_size_and_backend_change_the_cuda_key():
    scale, _ = _fresh_cuda()
    ext = {"SCALE": scale}

    def key(backend="cuda", **options):
        return gtscript.stencil(backend, _cache_defn, externals=ext, **options).cache_key

    assert key(gpu_arch="sm_80") == key(gpu_arch="sm_80")
    keys = {key(gpu_arch="sm_80"), key(gpu_arch="sm_90"), key(gpu_arch="sm_80", block_size=(16, 8)),
            key(gpu_arch="sm_80", block_size=(32, 4)), key("cpu")}
    assert len(keys) == 5
    # the CUDA C names its kernels after the stencil: a renamed one gets its own cubin
    assert key(gpu_arch="sm_80", name="renamed") != key(gpu_arch="sm_80")


# ================================================================== streams

def _last_stream(st):
    lib = ctypes.CDLL(str(build_emulation(st.source())))
    return ctypes.c_ulonglong.in_dll(lib, "gt_emu_last_stream")


class _CupyLikeStream:
    ptr = 0x1234


class _NumbaLikeStream:
    handle = ctypes.c_void_p(0x5678)


class _TorchLikeStream:
    cuda_stream = 0x9ABC


@pytest.mark.parametrize("stream, handle", [(None, 0), (77, 77), (_CupyLikeStream(), 0x1234),
                                            (_NumbaLikeStream(), 0x5678), (_TorchLikeStream(), 0x9ABC)],
                         ids=["default", "int", "ptr", "ctypes-handle", "cuda_stream"])
@pytest.mark.parametrize("device", [False, True], ids=["numpy", "cuda-array-interface"])
def test_every_launch_runs_on_the_given_stream(stream, handle, device):
    st = cuda(_spine("lap_lap_written_defn"))
    rng = np.random.default_rng(4)
    inp = rng.uniform(-1, 1, (12, 10, 8))
    out, ref = np.full(inp.shape, 7.0), np.full(inp.shape, 7.0)
    gtscript.stencil("cpu", _spine("lap_lap_written_defn"))(inp, ref)
    last = _last_stream(st)
    last.value = 0xDEAD
    if device:
        st(DeviceArray(inp, readonly=True), DeviceArray(out), stream=stream)
    else:
        st(inp, out, stream=stream)
    assert last.value == handle
    assert_same(out, ref, "results after the stream was synchronised")


def test_bad_streams_are_rejected_naming_the_argument():
    st = cuda(_spine("copy_defn"))
    a, b = np.ones((3, 3, 3)), np.zeros((3, 3, 3))
    with pytest.raises(TypeError, match="stream must be None .* not str"):
        st(a, b, stream="default")
    with pytest.raises(TypeError, match="stream must be"):
        st(a, b, stream=True)
    with pytest.raises(ValueError, match="stream must be a handle between 0"):
        st(a, b, stream=-1)
    assert (b == 0).all()


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_only_the_cuda_backend_takes_stream(backend):
    st = gtscript.stencil(backend, _spine("copy_defn"))
    a, b = np.ones((3, 3, 3)), np.zeros((3, 3, 3))
    for stream in (None, 0, _CupyLikeStream()):
        with pytest.raises(TypeError, match="only the cuda backend takes stream="):
            st(a, b, stream=stream)
    assert (b == 0).all()


# A `while` loop whose body writes an argument field and whose condition or body reads a
# temporary at a horizontal offset: the block must have computed the temporary on its halo
# before any of its threads loops, and a thread's loop writes only its own point. Compared
# with the cpu backend (blocks in both orders, several block shapes, a domain smaller than
# the arrays) and with the numpy backend.
def _while_reads_offset_temporary_in_condition(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a * 2.0 + 1.0
        out = 0.0
        while out < t[1, 0, 0] + t[0, -1, 0]:
            out = out + 1.5


def _while_reads_offset_temporary_in_body(a: Field[np.float64], b: Field[np.float64],
                                          out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a * 2.0 + b
        n = 0.0
        while n < 3.0:
            out = out + t[-1, 0, 0] - t[0, 1, 0]
            n = n + 1.0


def _while_reads_temporary_of_an_earlier_computation(a: Field[np.float64], out: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        t = a + 1.0
    with computation(PARALLEL), interval(...):
        while out < t[1, 1, 0] * 3.0:
            out = out + t[-1, -1, 0]


@pytest.mark.parametrize("defn", [_while_reads_offset_temporary_in_condition,
                                  _while_reads_offset_temporary_in_body,
                                  _while_reads_temporary_of_an_earlier_computation],
                         ids=["condition", "body", "earlier-computation"])
@pytest.mark.parametrize("block", [(4, 2), (3, 3), (8, 8)])
def test_while_writing_an_argument_reads_offset_temporaries_across_blocks(defn, block):
    names = list(defn.__annotations__)
    shape = (13, 11, 5)

    def make(_cpu):  # the same arguments every time
        rng = np.random.default_rng(11)
        args = {n: rng.uniform(0.5, 1.5, shape) for n in names}
        args["out"] = np.zeros(shape)
        return args

    kw = {"origin": (1, 1, 0), "domain": (11, 9, 5)}
    result = compare_with_cpu((defn, None), make, call_kwargs=kw, block=block)
    expected = make(None)
    gtscript.stencil("numpy", defn)(**expected, **kw)
    assert_same(result["out"], expected["out"], "cuda (emulated) vs numpy")
    assert (result["out"] != 0.0).sum() > 0.9 * 11 * 9 * 5  # the loops ran
    assert (result["out"][0] == 0.0).all() and (result["out"][-1] == 0.0).all()  # outside
