"""Runs cuda stencils on the CPU: the exact CUDA C that NVRTC compiles (``stencil.source()``)
is compiled by the host C compiler against ``gt_cuda_emulation.h`` and loaded into the stencil,
whose calls then go through the whole cuda call path (binding, validation, copies, launch
plans, thread mapping) with the emulated device instead of a GPU."""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

HEADER = Path(__file__).with_name("gt_cuda_emulation.h")
CFLAGS = ["-O1", "-shared", "-fPIC", "-pthread", "-std=gnu11", "-ffp-contract=off", "-fno-fast-math"]

_build_dir = Path(tempfile.mkdtemp(prefix="gtscript-cuda-emulation-"))
atexit.register(shutil.rmtree, _build_dir, ignore_errors=True)


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")


def require_compiler() -> None:
    """Skip the calling test where no host C compiler can run the cuda emulation (make test
    always has one: gcc builds the C core)."""
    if compiler() is None:
        import pytest

        pytest.skip("no host C compiler for the cuda emulation")


def build(source: str) -> Path:
    """The emulation library for a CUDA source (built once per source text)."""
    digest = hashlib.sha256(source.encode() + HEADER.read_bytes()).hexdigest()[:24]
    lib = _build_dir / f"k{digest}.so"
    if lib.exists():
        return lib
    src = _build_dir / f"k{digest}.cu"
    src.write_text(source)
    cmd = [compiler(), *CFLAGS, "-include", str(HEADER), "-x", "c", str(src), "-o", str(lib) + ".tmp", "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the host compiler rejected the CUDA source:\n{done.stderr}\n{source}")
    os.replace(str(lib) + ".tmp", lib)
    return lib


def emulate(stencil, block=(4, 2), reverse=False):
    """Makes later calls of a cuda stencil run on the host emulation, with thread blocks of
    ``block`` (small by default: many blocks, halos wider than some tiles), run in
    decreasing block order if ``reverse``; returns the stencil."""
    lib = build(stencil.source())
    stencil._cuda_emulate(str(lib), block)
    # the same loaded library (dlopen shares it): its block order applies to the stencil's calls
    ctypes.c_int.in_dll(ctypes.CDLL(str(lib)), "gt_emu_block_order").value = int(reverse)
    return stencil
