"""The core linked to LLVM's static libraries (CMake's GTSCRIPT_LLVM_STATIC=ON), the way the
portable wheel is built (packaging/portable_wheel.py, `make wheel-portable`, with its own LLVM),
here against the system's LLVM 19 (Debian ships its static libraries with llvm-19-dev): no
libLLVM needed at run time, no symbol of LLVM or C++ exported or left undefined, and stencils
build and run with it (the JIT, vector math through libmvec, threads, the disk cache read by a
second process, a build error).

One build of the core into a temporary directory (about a minute on two cores: LLVM's
libraries make a 60 MB module)."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

from test_packaging import _configure

ROOT = Path(__file__).resolve().parents[2]
# the module's own entry points: Python's, and the thread count threadpoolctl sets (threads.py)
EXPORTS = {"PyInit__core", "gtscript_get_num_threads", "gtscript_set_num_threads"}

CHECK = textwrap.dedent('''\
    import sys
    import numpy as np
    import gtscript
    from gtscript import FORWARD, PARALLEL, Field, computation, interval, exp, log

    assert gtscript.__file__.startswith(sys.argv[1]), gtscript.__file__
    assert gtscript._core.target()["llvm"].startswith("19"), gtscript._core.target()

    @gtscript.stencil(backend="cpu", vector_math=True)
    def physics(t: Field[np.float64], q: Field[np.float64], out: Field[np.float64]):
        with computation(FORWARD), interval(0, 1):
            out = exp(t) * q
        with computation(FORWARD), interval(1, None):
            out = out[0, 0, -1] + log(q + 1.0) * exp(-t)

    @gtscript.stencil(backend="cpu")
    def lap(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0] + inp[0, -1, 0] - 4.0 * inp

    rng = np.random.default_rng(1)
    t = rng.random((64, 3, 40))
    q = rng.random((64, 3, 40))
    out = np.zeros_like(t)
    gtscript.set_num_threads(2)
    physics(t, q, out)
    ref = np.empty_like(t)
    ref[:, :, 0] = np.exp(t[:, :, 0]) * q[:, :, 0]
    for k in range(1, 40):
        ref[:, :, k] = ref[:, :, k - 1] + np.log(q[:, :, k] + 1.0) * np.exp(-t[:, :, k])
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=0)

    a = rng.uniform(-1, 1, (9, 8, 5))
    want = a[2:, 1:-1] + a[:-2, 1:-1] + a[1:-1, 2:] + a[1:-1, :-2] - 4.0 * a[1:-1, 1:-1]
    b = np.full_like(a, 7.0)
    lap(a, b, origin=(1, 1, 0), domain=(7, 6, 5))
    np.testing.assert_array_equal(b[1:-1, 1:-1], want)
    assert (b[0] == 7.0).all() and (b[:, 0] == 7.0).all()
    print("sources", physics.build_info["module_source"], lap.build_info["module_source"])

    try:
        @gtscript.stencil(backend="cpu")
        def bad(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                a = b[1, 0, 0]
                b = a[1, 0, 0]
    except gtscript.GTScriptSemanticError as e:
        print("error", type(e).__name__)
    ''')


@pytest.fixture(scope="module")
def static_core(tmp_path_factory):
    """The gtscript package with a core linked to LLVM's static libraries, in a temporary
    directory; and the module file."""
    tmp = tmp_path_factory.mktemp("static-llvm")
    done = _configure(tmp, "-DGTSCRIPT_LLVM_STATIC=ON", "-DGTSCRIPT_WERROR=ON")
    assert done.returncode == 0, (
        done.stdout[-3000:] + done.stderr[-3000:] +
        "\n(Debian's static LLVM needs zlib1g-dev and libzstd-dev: make test installs them)")
    cmake = Path(shutil.which("cmake", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"))
    built = subprocess.run([str(cmake), "--build", str(tmp / "build")], capture_output=True,
                           text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    package = tmp / "site" / "gtscript"
    shutil.copytree(ROOT / "gtscript", package,
                    ignore=shutil.ignore_patterns("_core*.so", "__pycache__"))
    (core,) = (tmp / "build").glob("_core*.so")
    shutil.copy(core, package)
    return package, package / core.name


def _dynamic(core: Path):
    with open(core, "rb") as f:
        elf = ELFFile(f)
        needed = {tag.needed for section in elf.iter_sections()
                  if isinstance(section, DynamicSection)
                  for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"}
        symbols = list(elf.get_section_by_name(".dynsym").iter_symbols())
        defined = {s.name for s in symbols if s["st_shndx"] != "SHN_UNDEF" and s.name
                   and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
                   and s["st_other"]["visibility"] == "STV_DEFAULT"}
        undefined = {s.name for s in symbols if s["st_shndx"] == "SHN_UNDEF" and s.name}
    return needed, defined, undefined


def test_static_core_needs_no_libllvm_and_exports_only_its_entry_points(static_core):
    _, core = static_core
    needed, defined, undefined = _dynamic(core)
    assert not any("LLVM" in lib for lib in needed), needed
    assert defined == EXPORTS, sorted(defined - EXPORTS)[:20]
    # a function of LLVM's C API left undefined would only fail when the module is imported
    # (a shared library may leave symbols to the process): none is
    assert not [s for s in undefined if s.startswith(("LLVM", "_ZN4llvm"))], \
        sorted(s for s in undefined if s.startswith(("LLVM", "_ZN4llvm")))[:20]


def test_static_core_builds_and_runs_stencils(static_core, tmp_path):
    package, _ = static_core
    env = {**os.environ, "PYTHONPATH": str(package.parent),
           "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache")}
    script = tmp_path / "check.py"  # a file: stencil definitions are read from their source
    script.write_text(CHECK)
    runs = [subprocess.run([sys.executable, str(script), str(package)], capture_output=True,
                           text=True, env=env, cwd=tmp_path, timeout=600) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "error GTScriptSemanticError" in done.stdout, done.stdout
    # built by the first process, read back from the disk cache by the second
    assert "sources build build" in runs[0].stdout, runs[0].stdout
    assert "sources disk disk" in runs[1].stdout, runs[1].stdout
