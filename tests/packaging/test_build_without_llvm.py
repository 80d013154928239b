"""The core built without LLVM (CMake's GTSCRIPT_LLVM=OFF), as on a GPU machine that has no
LLVM 19: it configures even where the LLVM it is pointed at does not exist, links no libLLVM,
imports, runs numpy-backend stencils, builds cuda stencils (run here on the host emulation),
and refuses a cpu stencil with a RuntimeError that says why and what to use instead.

One build of the core into a temporary directory (about 15 s on two cores)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from test_packaging import _configure

ROOT = Path(__file__).resolve().parents[2]

CHECK = textwrap.dedent('''\
    import sys
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    def lap(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp

    assert gtscript.__file__.startswith(sys.argv[1]), gtscript.__file__
    assert gtscript._core.target()["llvm"] == "none"
    rng = np.random.default_rng(5)
    a = rng.uniform(-1, 1, (9, 8, 5))
    want = a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4.0 * a[1:-1, 1:-1]
    out = np.full_like(a, 7.0)
    gtscript.stencil("numpy", lap)(a, out, origin=(1, 1, 0), domain=(7, 6, 5))
    np.testing.assert_allclose(out[1:-1, 1:-1], want, rtol=1e-14)
    assert (out[0] == 7.0).all() and (out[:, 0] == 7.0).all()
    try:
        gtscript.stencil("cpu", lap)
    except RuntimeError as e:
        print("cpu:", e)
    else:
        raise AssertionError("a core without LLVM built a cpu stencil")
    try:
        gtscript._core.nvrtc()
    except RuntimeError:
        print("cuda: no NVRTC here")
        sys.exit(0)
    sys.path.insert(0, sys.argv[2])
    from cuda_emulation.runner import compiler, emulate
    gpu = gtscript.stencil("cuda", lap, gpu_arch="sm_90")
    assert "__global__" in gpu.source()
    if compiler() is not None:
        out = np.full_like(a, 7.0)
        emulate(gpu)(a, out, origin=(1, 1, 0), domain=(7, 6, 5))
        np.testing.assert_allclose(out[1:-1, 1:-1], want, rtol=1e-14)
        assert (out[0] == 7.0).all()
        print("cuda: emulated call matches")
    ''')


@pytest.fixture(scope="module")
def core_without_llvm(tmp_path_factory):
    """The gtscript package with a core built by GTSCRIPT_LLVM=OFF, in a temporary directory."""
    tmp = tmp_path_factory.mktemp("nollvm")
    # an LLVM_DIR that does not exist: the build must not look for LLVM at all
    done = _configure(tmp, "-DGTSCRIPT_LLVM=OFF", "-DGTSCRIPT_WERROR=ON",
                      f"-DLLVM_DIR={tmp / 'no-such-llvm'}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built without LLVM" in done.stdout
    ninja = (tmp / "build" / "build.ninja").read_text()
    # the cpu backend's stand-in and the LLVM-free column-block analysis the planner uses; no
    # LLVM code generation, and the rest of the core as in every build
    for built in ("backend/cpu/nollvm.c", "backend/cpu/blocks.c", "backend/cuda/nvrtc.c", "module.c"):
        assert f"csrc/{built}" in ninja, built
    for left_out in ("jit.c", "codegen.c", "build.c", "stream.c", "columns.c", "perfmap.c"):
        assert f"csrc/backend/cpu/{left_out}" not in ninja, left_out
    cmake = Path(shutil.which("cmake", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"))
    built = subprocess.run([str(cmake), "--build", str(tmp / "build")], capture_output=True,
                           text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    package = tmp / "site" / "gtscript"
    shutil.copytree(ROOT / "gtscript", package,
                    ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    (core,) = (tmp / "build").glob("_core*.so")
    shutil.copy(core, package)
    return package


def test_core_without_llvm_links_no_llvm(core_without_llvm):
    (core,) = core_without_llvm.glob("_core*.so")
    assert b"libLLVM" not in core.read_bytes()


def test_core_without_llvm_runs_numpy_and_cuda_and_refuses_cpu(core_without_llvm, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(core_without_llvm.parent),
           "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache")}
    script = tmp_path / "check.py"  # a file: stencil definitions are read from their source
    script.write_text(CHECK)
    done = subprocess.run([sys.executable, str(script), str(core_without_llvm),
                           str(ROOT / "tests")], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    cpu = next(line for line in done.stdout.splitlines() if line.startswith("cpu:"))
    assert "building stencil 'lap' for the cpu backend failed" in cpu
    assert "built without LLVM (GTSCRIPT_LLVM=OFF)" in cpu and "'numpy' or 'cuda'" in cpu
    assert "cuda:" in done.stdout
