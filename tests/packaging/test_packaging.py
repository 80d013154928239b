"""The build and the package: CMakeLists.txt's LLVM check and warning flags, the message of a
checkout whose core was never built, the one version number.

The slow end-to-end checks (``pip install .`` into a fresh venv, the relocatable wheel run with
the system's LLVM hidden) are in tests_install/, run by ``make wheel-test``."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gtscript

ROOT = Path(__file__).resolve().parents[2]


def _cmake() -> str:
    """CMake of the venv (the Makefile installs it there) or of the machine."""
    here = Path(sys.executable).parent / "cmake"
    found = str(here) if here.exists() else shutil.which("cmake")
    assert found, "cmake is needed to build gtscript (pip install cmake)"
    return found


def _configure(tmp_path, *args):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([_cmake(), "-S", str(ROOT), "-B", str(tmp_path / "build"),
                           "-G", "Ninja", f"-DPython_EXECUTABLE={sys.executable}", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def _fake_llvm(tmp_path, version: str, shared: bool = True) -> Path:
    """A CMake package directory that says it is LLVM ``version``, as an llvm-N-dev would."""
    d = tmp_path / f"llvm-{version}" / "lib" / "cmake" / "llvm"
    d.mkdir(parents=True)
    major, minor, patch = version.split(".")
    (d / "LLVMConfigVersion.cmake").write_text(
        f'set(PACKAGE_VERSION "{version}")\n'
        "set(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
    (d / "LLVMConfig.cmake").write_text(textwrap.dedent(f"""\
        set(LLVM_PACKAGE_VERSION {version})
        set(LLVM_VERSION_MAJOR {major})
        set(LLVM_VERSION_MINOR {minor})
        set(LLVM_VERSION_PATCH {patch})
        set(LLVM_INCLUDE_DIRS "{d}/include")
        set(LLVM_LIBRARY_DIR "{d}/lib")
        set(LLVM_DEFINITIONS "")
        """) + ("add_library(LLVM SHARED IMPORTED)\n" if shared else ""))
    return d


def test_wrong_llvm_version_is_named_with_the_one_needed(tmp_path):
    llvm14 = _fake_llvm(tmp_path, "14.0.6")
    done = _configure(tmp_path, f"-DLLVM_DIR={llvm14}")
    assert done.returncode != 0
    err = " ".join(done.stderr.split())  # CMake wraps its messages
    assert f"found LLVM 14.0.6 at {llvm14}, gtscript needs LLVM 19" in err, done.stderr
    assert "apt-get install llvm-19-dev" in err and "LLVM_DIR" in err


def test_llvm_without_its_shared_library_is_refused(tmp_path):
    static_only = _fake_llvm(tmp_path, "19.1.7", shared=False)
    done = _configure(tmp_path, f"-DLLVM_DIR={static_only}")
    assert done.returncode != 0
    assert "has no shared library" in " ".join(done.stderr.split()), done.stderr


def _compile_flags(build: Path) -> str:
    return (build / "build.ninja").read_text()


def test_werror_only_in_development_builds(tmp_path):
    """A user's install must build with any compiler's warnings; the Makefile's build (CI and
    development) turns them into errors."""
    user = _configure(tmp_path)
    assert user.returncode == 0, user.stdout + user.stderr
    assert "gtscript: LLVM 19." in user.stdout
    flags = _compile_flags(tmp_path / "build")
    assert "-Wall" in flags and "-Werror" not in flags
    shutil.rmtree(tmp_path / "build")
    dev = _configure(tmp_path, "-DGTSCRIPT_WERROR=ON")
    assert dev.returncode == 0, dev.stdout + dev.stderr
    assert "-Werror" in _compile_flags(tmp_path / "build")
    assert "-DGTSCRIPT_WERROR=ON" in (ROOT / "Makefile").read_text()


def test_installs_build_in_a_fresh_directory():
    """No build directory is configured for scikit-build-core: each install configures and
    compiles in a new temporary directory, never reusing an in-tree build/ of an earlier one
    (tests_install/ checks that `pip install .` leaves the checkout as it was)."""
    import tomllib

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["scikit-build"]
    assert "build-dir" not in settings and "build" not in settings
    assert "setup.py" not in {p.name for p in ROOT.iterdir()}


def test_sources_are_globbed(tmp_path):
    """Every .c under csrc/ is built, with nothing to edit when one is added (but the cpu
    backend's stand-in of a core without LLVM, tests/packaging/test_build_without_llvm.py)."""
    done = _configure(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    flags = _compile_flags(tmp_path / "build")
    sources = sorted(ROOT.glob("csrc/**/*.c"))
    assert len(sources) > 40
    for src in sources:
        built = src.relative_to(ROOT).as_posix() in flags
        assert built == (src.name != "nollvm.c"), src


def test_unbuilt_checkout_says_so(tmp_path):
    """A copy of the package without its C core: the import names the missing core and the
    commands that build it (not a circular-import error)."""
    shutil.copytree(ROOT / "gtscript", tmp_path / "gtscript",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    # -S: no site-packages, where an editable install of another checkout may map
    # gtscript._core to its own build (the core is the first thing gtscript imports)
    done = subprocess.run([sys.executable, "-S", "-c", "import gtscript"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: gtscript's C core is not built: run `make build`"), done.stderr
    assert "pip install ." in last and str(tmp_path / "gtscript") in last
    assert "circular" not in done.stderr and "partially initialized" not in done.stderr


def test_one_version_number():
    """pyproject.toml takes the version from gtscript/_version.py: nowhere else writes it."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"] and "version" not in project["project"]
    assert project["tool"]["scikit-build"]["metadata"]["version"]["input"] == "gtscript/_version.py"
    from gtscript._version import __version__

    assert gtscript.__version__ == __version__
    assert __version__.count(".") == 2 and all(p.isdigit() for p in __version__.split("."))


def test_cuda_pieces_are_an_extra():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any("nvidia" in d for d in project["dependencies"])
    assert not any("nvidia" in d for d in project["optional-dependencies"]["test"])
    assert any(d.startswith("nvidia-cuda-nvrtc") for d in project["optional-dependencies"]["cuda"])
    # make test installs it, so that CI compiles the cuda backend's PTX
    done = subprocess.run([sys.executable, str(ROOT / ".ci" / "requirements.py"), "test", "mpi",
                           "cuda", "wheel"], capture_output=True, text=True, check=True)
    assert "nvidia-cuda-nvrtc" in done.stdout.split()
    makefile = (ROOT / "Makefile").read_text()
    extras = re.search(r"^TEST_EXTRAS := (.*)$", makefile, re.M).group(1).split()
    assert {"test", "mpi", "cuda", "docs", "wheel"} <= set(extras)
    lines = [ln.split(".ci/requirements.py", 1)[1].split(">")[0].split()
             for ln in makefile.splitlines() if "$(VPY) .ci/requirements.py" in ln]
    # make run's install: the dependencies alone (lean); make test's: the extras on top
    assert lines == [[], ["$(TEST_EXTRAS)"]], lines
    assert re.search(r"^test: build \$\(TEST_STAMP\)( browser)?( static-llvm-deps)?$", makefile, re.M)
    assert re.search(r"^run: build$", makefile, re.M)


def test_license_is_the_declared_one():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder nor the names of its" in text


# ============================================================== python -m gtscript --version, info

def _gtscript(*args, env=None, code=None):
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "gtscript", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def test_version_command():
    done = _gtscript("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"gtscript {gtscript.__version__}\n"


def test_info_command(tmp_path):
    import json

    import numpy as np

    env = {"GTSCRIPT_NUM_THREADS": "3", "GTSCRIPT_CACHE_DIR": str(tmp_path / "c")}
    done = _gtscript("info", "--json", env=env)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["gtscript"] == gtscript.__version__
    assert facts["location"] == str(ROOT / "gtscript")
    assert facts["numpy"] == np.__version__
    assert facts["llvm"].split(".")[0] == "19"
    assert facts["target"].startswith(("x86_64", "aarch64", "arm64"))
    assert facts["cpu"] and isinstance(facts["cpu_features"], list)
    assert facts["threads"] == 3 and facts["cache_dir"] == str(tmp_path / "c")
    # the same facts as text, one a line
    text = _gtscript("info", env=env)
    assert text.returncode == 0, text.stderr
    lines = dict(line.split(None, 1) for line in text.stdout.splitlines() if line.split()[0] != "cpu")
    assert lines["gtscript"].startswith(gtscript.__version__) and lines["llvm"] == facts["llvm"]
    assert lines["threads"] == "3" and lines["cache"] == str(tmp_path / "c")
    assert lines["nvrtc"].startswith(facts["nvrtc"] or "not found: NVRTC")


def test_info_says_where_nvrtc_was_looked_for():
    """Without the nvidia-cuda-nvrtc wheel on the path and no CUDA_HOME, NVRTC is reported as
    not found, with the places looked in (as the cuda backend's error says them), or, with no
    such place, what was searched instead."""
    import ctypes.util

    code = ("import sys, json, gtscript.sysinfo as s; "
            "sys.path[:] = [p for p in sys.path if 'site-packages' not in p]; "
            "print(json.dumps(s.info()))")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    import json

    facts = json.loads(done.stdout)
    if ctypes.util.find_library("nvrtc") is None:  # none on the system library path either
        assert facts["nvrtc"] is None
        assert "NVRTC (libnvrtc.so*) was not found" in facts["nvrtc_note"]
        assert "pip install gtscript[cuda]" in facts["nvrtc_note"]
        # no place of its own to look in: the note says what was searched instead
        assert "looked in and" not in facts["nvrtc_note"]
        assert ("looked only on the system library path (CUDA_HOME and CUDA_PATH are unset, "
                "and no sys.path entry has the nvidia-cuda-nvrtc wheel's nvidia/*/lib)"
                in facts["nvrtc_note"]), facts["nvrtc_note"]
    else:
        assert facts["nvrtc"]
