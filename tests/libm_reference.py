"""The C library's math functions on NumPy arrays, one call per element through ctypes: what a
cpu kernel's libm calls compute, to compare with (NumPy has SIMD versions of its own)."""

import ctypes
import ctypes.util

import numpy as np

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))


def libm(name, dt, *args):
    """libm's `name` (expf, ... for float32) on every element, as the kernels call it."""
    c = ctypes.c_double if dt == np.float64 else ctypes.c_float
    fn = getattr(LIBM, name if dt == np.float64 else name + "f")
    fn.restype, fn.argtypes = c, [c] * len(args)
    flat = [np.asarray(x, dtype=dt).ravel() for x in args]
    return np.array([fn(*(float(v[i]) for v in flat)) for i in range(flat[0].size)],
                    dtype=dt).reshape(np.shape(args[0]))
