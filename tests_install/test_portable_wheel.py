"""The portable wheel (`make wheel-portable-test`, after packaging/portable_wheel.py; long, not
part of `make test`): the manylinux_2_28 wheel in dist/ for this Python.

What makes it portable is checked in the module itself, with pyelftools (auditwheel's own ELF
reader): no symbol version newer than glibc 2.28, no shared library beyond the manylinux
policy's (no libLLVM, no C++ runtime), nothing of LLVM or of C++ exported, no AVX instruction
in code that runs on every x86-64 CPU. Then the wheel is installed into a fresh venv and run
with the system's LLVM hidden: stencils built, the vector math, threads, the disk cache read by
a second process, a build error.
"""

import glob
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# test_install.py beside this file; the stencils that the core linked to Debian's static LLVM
# runs in make test (tests/packaging/test_static_llvm.py), run here by the wheel
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests" / "packaging"), str(HERE.parent / "tests")]
from elftools.elf.dynamic import DynamicSection  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402
from elftools.elf.gnuversions import GNUVerNeedSection  # noqa: E402
from test_install import ROOT, _hide_system_llvm, _site_packages, _venv  # noqa: E402
from test_static_llvm import CHECK  # noqa: E402

# what a manylinux wheel may link (PEP 600: the libraries of glibc itself)
POLICY_LIBRARIES = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"


@pytest.fixture(scope="module")
def wheel() -> Path:
    found = sorted(glob.glob(str(ROOT / "dist" / f"gtscript-*-{TAG}-*manylinux_2_28_*.whl")),
                   key=os.path.getmtime)
    assert found, f"no manylinux_2_28 {TAG} wheel in dist/: run `make wheel-portable` first"
    return Path(found[-1])


@pytest.fixture(scope="module")
def core(wheel, tmp_path_factory) -> Path:
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if re.match(r"gtscript/_core.*\.so$", n))
        return Path(zf.extract(member, tmp_path_factory.mktemp("portable-core")))


def test_the_core_needs_glibc_2_28_at_most_and_nothing_else(core):
    with open(core, "rb") as f:
        elf = ELFFile(f)
        needed = {tag.needed for section in elf.iter_sections()
                  if isinstance(section, DynamicSection)
                  for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"}
        versions = {aux.name for section in elf.iter_sections()
                    if isinstance(section, GNUVerNeedSection)
                    for _, auxes in section.iter_versions() for aux in auxes}
    assert needed and needed <= POLICY_LIBRARIES, needed - POLICY_LIBRARIES
    glibc = [tuple(map(int, v.split("_")[1].split("."))) for v in versions
             if re.fullmatch(r"GLIBC_\d+(\.\d+)*", v)]
    assert glibc and max(glibc) <= (2, 28), sorted(versions)
    assert not any(v.startswith(("GLIBCXX", "CXXABI")) for v in versions), sorted(versions)


def test_the_core_exports_its_entry_points_alone(core):
    with open(core, "rb") as f:
        elf = ELFFile(f)
        dynsym = elf.get_section_by_name(".dynsym")
        exported = {s.name for s in dynsym.iter_symbols()
                    if s["st_shndx"] != "SHN_UNDEF" and s.name
                    and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
                    and s["st_other"]["visibility"] == "STV_DEFAULT"}
        size = sum(s["sh_size"] for s in elf.iter_sections() if s.name == ".text")
    # LLVM is inside (its code is most of the module), but nothing of it or of libc++ is
    # visible to another LLVM or C++ library in the process
    assert size > 10 * 2**20, size
    # Python's, and the thread count threadpoolctl sets (threads.py)
    assert exported == {"PyInit__core", "gtscript_get_num_threads", "gtscript_set_num_threads"}, \
        sorted(exported)[:20]


def test_the_core_runs_on_every_x86_64_cpu(core):
    if "x86_64" not in core.name:
        pytest.skip("an aarch64 core: baseline checked by its own target triple")
    # the build machine has AVX-512; code built for it would stop other CPUs with SIGILL.
    # LLVM's JIT chooses the host's instructions at run time, the module's code must not:
    # AVX registers appear only in LLVM's BLAKE3 hashing, which picks its AVX2 or AVX-512
    # version by CPUID at run time
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(core)],
                          capture_output=True, text=True, check=True).stdout
    function, avx = "", set()
    for line in dump.splitlines():
        header = re.match(r"[0-9a-f]+ <(.*)>:$", line)
        if header:
            function = header[1]
        elif re.search(r"%[yz]mm\d", line):
            avx.add(function)
    assert all("blake3" in f for f in avx), sorted(avx)




def test_the_wheel_runs_stencils_without_the_system_llvm(wheel, tmp_path):
    python = _venv(tmp_path / "venv")
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    site = _site_packages(python)
    assert not (site / "gtscript.libs").exists(), "nothing to bundle: LLVM is in the module"
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["GTSCRIPT_CACHE_DIR"] = str(tmp_path / "cache")
    hidden = _hide_system_llvm()
    runs = [subprocess.run([*hidden, str(python), str(script), str(site / "gtscript")],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    for ran in runs:
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "error GTScriptSemanticError" in ran.stdout, ran.stdout
    # built by the first process, read from the disk cache by the second
    assert "sources build build" in runs[0].stdout, runs[0].stdout
    assert "sources disk disk" in runs[1].stdout, runs[1].stdout
    # the installed core is the wheel's, and it does not load libLLVM from anywhere
    ldd = subprocess.run(["ldd", str(next((site / "gtscript").glob("_core*.so")))],
                         capture_output=True, text=True, check=True).stdout
    assert "LLVM" not in ldd and "not found" not in ldd, ldd
