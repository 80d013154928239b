"""The package as a user gets it (slow: builds gtscript, makes venvs; run by `make wheel-test`,
not by `make test`):

- ``pip install .`` of the checkout into a fresh venv (build isolation: scikit-build-core and
  NumPy come from the package registry) runs a stencil, and leaves the checkout as it was;
- the relocatable wheel that ``make wheel`` put in dist/ (auditwheel bundles libLLVM and what
  it loads into gtscript.libs/) installs into a fresh venv and runs a stencil with the system's
  LLVM hidden: a private mount namespace lays an empty directory over /usr/lib/llvm-19 and
  /dev/null over each libLLVM file of the system library directory, so that a dependency on
  them fails to load instead of being found (other processes of the machine still see them).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STENCIL = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    @gtscript.stencil(backend="cpu")
    def lap(a: Field[np.float64], b: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            b = a[1, 0, 0] + a[-1, 0, 0] - 2.0 * a

    a = np.random.default_rng(0).random((6, 4, 3))
    b = np.zeros((4, 4, 3))
    lap(a, b, origin={"a": (1, 0, 0), "b": (0, 0, 0)}, domain=(4, 4, 3))
    assert np.array_equal(b, a[2:6] + a[0:4] - 2.0 * a[1:5])
    print("ran", gtscript.__version__, gtscript.__file__)
''')


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=300)
    return path / "bin" / "python"


def _run_stencil(python: Path, tmp_path: Path, wrapper=()) -> subprocess.CompletedProcess:
    script = tmp_path / "run_stencil.py"
    script.write_text(STENCIL)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["GTSCRIPT_CACHE_DIR"] = str(tmp_path / "cache")
    return subprocess.run([*wrapper, str(python), str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def _site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def test_pip_install_of_the_checkout_runs_a_stencil(tmp_path):
    python = _venv(tmp_path / "venv")
    before = sorted(p.name for p in ROOT.iterdir())
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           str(ROOT)], capture_output=True, text=True, timeout=1200,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    # built in a temporary directory: nothing new in the checkout (no build/ to reuse)
    assert sorted(p.name for p in ROOT.iterdir()) == before
    ran = _run_stencil(python, tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert str(_site_packages(python)) in ran.stdout
    # type checkers see the hints of the installed package (PEP 561), the core's included
    installed = _site_packages(python) / "gtscript"
    assert (installed / "py.typed").exists() and (installed / "_core.pyi").exists()
    version = subprocess.run([str(python), "-m", "gtscript", "--version"], cwd=tmp_path,
                             capture_output=True, text=True)
    source_version = re.search(r'__version__ = "(.*)"', (ROOT / "gtscript" / "_version.py").read_text())
    assert version.stdout.split() == ["gtscript", source_version[1]], version.stdout + version.stderr


def _the_wheel() -> Path:
    wheels = sorted(glob.glob(str(ROOT / "dist" / "gtscript-*manylinux*.whl")), key=os.path.getmtime)
    assert wheels, "no repaired wheel in dist/: run `make wheel` first (make wheel-test does)"
    return Path(wheels[-1])


SYSTEM_LLVM = ["/usr/lib/llvm-19", *glob.glob("/usr/lib/*-linux-gnu/libLLVM*"),
               *glob.glob("/usr/lib64/libLLVM*")]


def _hide_system_llvm() -> list[str]:
    """A command prefix that runs its command in a private mount namespace where the system's
    LLVM 19 is hidden (as root; else in a user namespace, where the kernel allows one)."""
    hide = []
    for path in SYSTEM_LLVM:
        if os.path.isdir(path):
            hide.append(f"mount -t tmpfs none {path}")
        elif os.path.isfile(path) and not os.path.islink(path):  # links die with their target
            hide.append(f"mount --bind /dev/null {path}")
    flags = "-m" if os.geteuid() == 0 else "-rm"
    return ["unshare", flags, "--propagation", "private", "sh", "-ec",
            " && ".join(hide) + ' && exec "$@"', "sh"]


def test_wheel_runs_without_the_system_llvm(tmp_path):
    wheel = _the_wheel()
    assert wheel.stat().st_size > 10 * 2**20, "the wheel does not bundle libLLVM"
    python = _venv(tmp_path / "venv")
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    site = _site_packages(python)
    core = next((site / "gtscript").glob("_core*.so"))
    # ldd: every library the core needs resolves, and libLLVM from the wheel's own copy
    ldd = subprocess.run(["ldd", str(core)], capture_output=True, text=True, check=True).stdout
    assert "not found" not in ldd, ldd
    llvm = [os.path.realpath(line.split("=>")[1].split(" (")[0].strip())
            for line in ldd.splitlines() if "libLLVM" in line]
    assert llvm and all(path.startswith(str(site / "gtscript.libs")) for path in llvm), ldd
    assert "/usr/lib/llvm" not in ldd and "/usr/lib/x86_64-linux-gnu/libLLVM" not in ldd, ldd

    # the check is real: with the system's LLVM hidden, a core linked to it does not load
    hidden = _hide_system_llvm()
    probe = subprocess.run([*hidden, "ls", "-A", "/usr/lib/llvm-19"], capture_output=True, text=True)
    assert probe.returncode == 0 and probe.stdout == "", probe.stderr
    if shutil.which("llvm-config-19"):
        system_lib = subprocess.run(["llvm-config-19", "--libdir"], capture_output=True,
                                    text=True).stdout.strip()
        gone = subprocess.run([*hidden, "sh", "-c", f"ls {system_lib}/libLLVM*"],
                              capture_output=True, text=True)
        assert gone.returncode != 0
    # ... and the loader finds it no more: the core of the wheel before auditwheel's repair
    # (linked to the system's libLLVM) does not load there, though it does outside
    raw = sorted(glob.glob(str(ROOT / "build" / "wheel" / "gtscript-*-linux_*.whl")))
    assert raw, "make wheel leaves the unrepaired wheel in build/wheel/"
    with zipfile.ZipFile(raw[-1]) as zf:
        member = next(n for n in zf.namelist() if n.startswith("gtscript/_core"))
        unrepaired = Path(zf.extract(member, tmp_path / "unrepaired"))
    load = [str(python), "-c", f"import ctypes; ctypes.CDLL({str(unrepaired)!r})"]
    assert subprocess.run(load, capture_output=True, text=True).returncode == 0
    blocked = subprocess.run([*hidden, *load], capture_output=True, text=True)
    assert blocked.returncode != 0 and "libLLVM" in blocked.stderr, blocked.stderr
    env = {**os.environ, "LD_DEBUG": "libs"}
    ran = subprocess.run([*hidden, str(python), "-c", "import gtscript"], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-4000:]
    opened = [line for line in ran.stderr.splitlines() if "calling init:" in line]
    assert any("gtscript.libs/libLLVM" in line for line in opened), "\n".join(opened)
    assert not any("/usr/lib/llvm" in line or "x86_64-linux-gnu/libLLVM" in line
                   for line in opened), "\n".join(opened)

    ran = _run_stencil(python, tmp_path, wrapper=hidden)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert str(site) in ran.stdout
