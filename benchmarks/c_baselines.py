"""Compile benchmarks/baselines.c at run time and call its kernels through ctypes.

    kernels = load(np.float64)          # {name: fn(*arrays, *scalars)}, or raises CompileError
    kernels["hdiff"](inp, coeff, out)
    stream_copy(src, dst)               # same element type as the arrays

One shared library per element type, built with `gcc -O3 -march=native -fopenmp` in a
temporary directory that lives as long as the process (the libraries stay mapped).
"""

import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy as np

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines.c")
CC = os.environ.get("CC", "gcc")
CFLAGS = ["-O3", "-march=native", "-fopenmp", "-shared", "-fPIC"]
_C_TYPES = {np.dtype(np.float64): ("double", ctypes.c_double),
            np.dtype(np.float32): ("float", ctypes.c_float)}
# name -> (number of array arguments, number of scalar arguments); the grid size sits between.
SIGNATURES = {"copy": (2, 0), "laplacian": (2, 0), "hdiff": (3, 0), "thomas": (5, 0),
              "advection": (5, 3)}

_build_dir = None
_libraries = {}


class CompileError(RuntimeError):
    """The C compiler is missing or rejected benchmarks/baselines.c."""


def compiler_version():
    """The first line of `gcc --version`, or None without a compiler."""
    if shutil.which(CC) is None:
        return None
    return subprocess.run([CC, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def _library(dtype):
    global _build_dir
    dtype = np.dtype(dtype)
    if dtype in _libraries:
        return _libraries[dtype]
    if shutil.which(CC) is None:
        raise CompileError(f"no C compiler ({CC!r} is not on PATH)")
    if _build_dir is None:
        _build_dir = tempfile.TemporaryDirectory(prefix="gtscript-bench-")
    c_name, _ = _C_TYPES[dtype]
    path = os.path.join(_build_dir.name, f"baselines_{c_name}.so")
    cmd = [CC, *CFLAGS, f"-DREAL={c_name}", SOURCE, "-o", path]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(f"{' '.join(cmd)} failed:\n{done.stderr}")
    _libraries[dtype] = ctypes.CDLL(path)
    return _libraries[dtype]


def _bind(function, n_arrays, n_scalars, scalar_type):
    pointer = ctypes.c_void_p
    function.argtypes = [pointer] * n_arrays + [ctypes.c_long] * 3 + [scalar_type] * n_scalars
    function.restype = None

    def call(*args):
        arrays, scalars = args[:n_arrays], args[n_arrays:]
        shape = arrays[0].shape
        for a in arrays:  # the C code indexes contiguous arrays of one shape and element type
            if a.shape != shape or a.dtype != arrays[0].dtype or not a.flags.c_contiguous:
                raise ValueError("C baselines need C-contiguous arrays of one shape and dtype")
        function(*(a.ctypes.data for a in arrays), *shape, *scalars)

    return call


def load(dtype):
    """{stencil name: callable(*arrays, *scalars)} for arrays of `dtype`."""
    library = _library(dtype)
    _, scalar_type = _C_TYPES[np.dtype(dtype)]
    return {name: _bind(getattr(library, name), n_arrays, n_scalars, scalar_type)
            for name, (n_arrays, n_scalars) in SIGNATURES.items()}


def stream_copy(src, dst):
    """dst[...] = src with the OpenMP copy loop (both contiguous, same size and dtype)."""
    if src.dtype != dst.dtype or src.size != dst.size or not (
            src.flags.c_contiguous and dst.flags.c_contiguous):
        raise ValueError("stream_copy needs two contiguous arrays of one size and dtype")
    function = _library(src.dtype).stream_copy
    function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_long]
    function.restype = None
    function(src.ctypes.data, dst.ctypes.data, src.size)
