"""Arrays laid out and aligned for a backend, with the API of GT4Py's ``gt4py.storage``.

A stencil accepts any array with the right dtype and number of dimensions, whatever its
strides.  These helpers give the layout each backend runs fastest on:

- ``cpu`` and ``numpy``: a NumPy array in C order (K, the last grid axis, has unit
  stride; data dimensions come after it), K padded so that every line along it starts at
  the same alignment, and the element at ``aligned_index`` on a 64-byte boundary (a cache
  line and an AVX-512 vector).  Pass the stencil's origin (its halo) as ``aligned_index``
  to align the first point a stencil computes.
- ``cuda``: a CuPy array (it has ``__cuda_array_interface__``) in Fortran order, I the
  unit-stride axis so that neighbouring GPU threads read neighbouring addresses.  Needs
  CuPy; without it ``backend="cuda"`` raises :class:`RuntimeError`.

The arrays are views into a slightly larger buffer (the padding and alignment offset), so
they are not contiguous; stencils do not need them to be.
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from types import FrameType

import numpy as np

#: Byte boundary the element at ``aligned_index`` (and the start of every line along the
#: innermost grid axis through it) is placed on.
ALIGNMENT = 64

#: Backend name -> "C" (last axis unit stride) or "F" (first axis unit stride).
_ORDER = {"cpu": "C", "numpy": "C", "cuda": "F"}

__all__ = ["ALIGNMENT", "Layout", "layout", "empty", "zeros", "ones", "full", "from_array"]


@dataclass(frozen=True)
class Layout:
    """Where an array lives inside its buffer: shapes in elements, strides and sizes in
    bytes (see :func:`layout`).

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import storage
    >>> lay = storage.layout((2, 2, 3), np.float32)
    >>> lay.padded, lay.nbytes, lay.byte_offset((1, 0, 0))
    ((2, 2, 16), 256, 128)
    """

    shape: tuple       # the array's shape
    padded: tuple      # the buffer's shape: ``shape`` with the innermost grid axis padded
    order: str         # "C" or "F"
    itemsize: int

    @property
    def strides(self) -> tuple:
        """Byte strides of the array (those of the padded buffer)."""
        axes = range(len(self.padded))
        fastest_first: Iterable[int] = reversed(axes) if self.order == "C" else axes
        strides, step = [0] * len(self.padded), self.itemsize
        for axis in fastest_first:
            strides[axis] = step
            step *= self.padded[axis]
        return tuple(strides)

    @property
    def nbytes(self) -> int:
        return math.prod(self.padded) * self.itemsize

    def byte_offset(self, index) -> int:
        """Bytes from the buffer's first element to the element at ``index``."""
        return sum(i * s for i, s in zip(index, self.strides))


#: GT4Py's backend names -> the gtscript backend nearest to each (its layout here, its code in
#: ``gtscript.stencil``).
GT4PY_BACKENDS = {
    "gt:cpu_ifirst": "cpu",
    "gt:cpu_kfirst": "cpu",
    "dace:cpu": "cpu",
    "dace:cpu_kfirst": "cpu",
    "dace:cpu_KJI": "cpu",
    "gt:gpu": "cuda",
    "dace:gpu": "cuda",
    "dace:gpu_IJK": "cuda",
    "debug": "numpy",
}
_noted: set = set()


def _backend(backend) -> str:
    """The gtscript backend for ``backend``: its own name, or GT4Py's name mapped (with a note,
    once per name, that the layout is gtscript's)."""
    mapped = GT4PY_BACKENDS.get(backend) if isinstance(backend, str) else None
    if mapped is None:
        return backend
    if backend not in _noted:
        _noted.add(backend)
        warnings.warn(f"gtscript.storage: GT4Py backend {backend!r} is gtscript's {mapped!r} "
                      f"(arrays get the {mapped!r} layout)", stacklevel=_caller_level())
    return mapped


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this module, seen from the function
    calling ``warnings.warn`` (so the note names the user's line)."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


def _backend_order(backend) -> str:
    try:
        return _ORDER[backend]
    except (KeyError, TypeError):
        raise ValueError(f"unknown backend {backend!r} for gtscript.storage "
                         f"(available: {', '.join(_ORDER)}, or GT4Py's "
                         f"{', '.join(GT4PY_BACKENDS)})") from None


def _normalise(shape, dtype):
    """Shape tuple, scalar dtype and number of data dimensions: a sub-array dtype such as
    ``(np.float64, (3,))`` appends its shape (GT4Py's data dimensions)."""
    try:
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    except (TypeError, ValueError):
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(n < 0 for n in shape):
        raise ValueError(f"shape must not have negative sizes, got {shape}")
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"dtype: {exc}") from None
    if not shape:
        raise ValueError("shape must have at least one dimension")
    extra = ()
    if dt.subdtype is not None:
        dt, extra = dt.subdtype
    if dt.kind not in "biuf" or ALIGNMENT % dt.itemsize:
        raise TypeError(f"dtype must be a boolean, integer or floating-point type, got {dt}")
    return shape + extra, dt, len(extra)


def _aligned_index(aligned_index, shape, ndata=0) -> tuple:
    if aligned_index is None:
        return (0,) * len(shape)
    try:
        index = tuple(int(i) for i in aligned_index)
    except (TypeError, ValueError):
        raise TypeError(f"aligned_index must be a tuple of ints, got {aligned_index!r}") from None
    if ndata and len(index) == len(shape) - ndata:  # GT4Py: the grid axes of a sub-array dtype
        index += (0,) * ndata
    if len(index) != len(shape):
        raise ValueError(f"aligned_index {index} must have one entry per dimension of "
                         f"shape {shape}")
    for axis, (i, n) in enumerate(zip(index, shape)):
        if not 0 <= i <= max(n - 1, 0):
            raise ValueError(f"aligned_index {index} lies outside shape {shape} "
                             f"(axis {axis})")
    return index


#: GT4Py's names of the grid axes in ``dimensions``; any other name is a data dimension.
_GRID_AXES = ("I", "J", "K")


def _data_dims(dimensions, shape, ndata: int) -> int:
    """The number of data dimensions: those of a sub-array dtype, else the names in GT4Py's
    ``dimensions`` (``["I", "J", "K", "0"]``) that are not grid axes, which come last. With a
    sub-array dtype, ``dimensions`` may name the axes of ``shape`` as given, without the
    dtype's (``dtype=(np.float64, (3,)), dimensions=["I", "J", "K"]``), as in GT4Py."""
    if dimensions is None:
        return ndata
    names = [str(d) for d in dimensions]
    own = ndata if ndata and len(names) == len(shape) - ndata else 0  # the dtype's, unnamed
    if len(names) + own != len(shape):
        raise ValueError(f"dimensions {tuple(names)} must name every axis of shape {shape}"
                         + (f" (or every axis but the {ndata} of the dtype's sub-array)"
                            if ndata else ""))
    grid = [n in _GRID_AXES for n in names]
    if grid != sorted(grid, reverse=True) or not any(grid):
        raise ValueError(f"dimensions {tuple(names)}: the grid axes (I, J, K) must come "
                         f"first, data dimensions after them")
    return own + grid.count(False) if own else max(ndata, grid.count(False))


def layout(shape, dtype, backend="cpu", dimensions=None) -> Layout:
    """The layout ``backend`` gets for ``shape`` and ``dtype``: the innermost grid axis (K
    on cpu, I on cuda) is padded so that the stride of the next axis out is a whole number
    of alignment units; data dimensions are never padded.

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import storage
    >>> lay = storage.layout((4, 3, 5), np.float64)          # cpu: K padded to 8 doubles
    >>> lay.padded, lay.strides
    ((4, 3, 8), (192, 64, 8))
    >>> storage.layout((5, 3, 2), np.float64, backend="cuda").padded   # cuda: I padded
    (8, 3, 2)
    """
    order = _backend_order(_backend(backend))
    shape, dt, ndata = _normalise(shape, dtype)
    return _layout(shape, dt, _data_dims(dimensions, shape, ndata), order)


def _layout(shape: tuple, dt: np.dtype, ndata: int, order: str) -> Layout:
    # C order: data dimensions are the fastest axes, then the last grid axis; F order: the
    # first grid axis is the fastest (data dimensions are the slowest).
    axis = len(shape) - 1 - ndata if order == "C" else 0
    inner = shape[axis + 1:] if order == "C" else ()
    line_bytes = dt.itemsize * math.prod(inner)           # one step along ``axis``
    unit = ALIGNMENT // math.gcd(ALIGNMENT, line_bytes)   # steps per aligned stride
    padded = list(shape)
    padded[axis] = -(-shape[axis] // unit) * unit
    return Layout(shape, tuple(padded), order, dt.itemsize)


def _alloc_numpy(lay: Layout, dt, index) -> np.ndarray:
    buffer = np.empty(lay.nbytes + ALIGNMENT, dtype=np.uint8)
    address = buffer.__array_interface__["data"][0] + lay.byte_offset(index)
    start = -address % ALIGNMENT
    padded = np.ndarray(lay.padded, dtype=dt, buffer=buffer, offset=start, strides=lay.strides)
    return padded[tuple(slice(0, n) for n in lay.shape)]


def _cupy():
    try:
        import cupy
    except ImportError:
        raise RuntimeError("gtscript.storage with backend='cuda' needs CuPy "
                           "(pip install cupy-cuda12x or cupy-cuda13x)") from None
    return cupy


def _alloc_cupy(lay: Layout, dt, index):
    cupy = _cupy()
    buffer = cupy.empty(lay.nbytes + ALIGNMENT, dtype=cupy.uint8)
    start = -(buffer.data.ptr + lay.byte_offset(index)) % ALIGNMENT
    padded = cupy.ndarray(lay.padded, dtype=dt, memptr=buffer.data + start, strides=lay.strides)
    return padded[tuple(slice(0, n) for n in lay.shape)]


def empty(shape, dtype=np.float64, *, backend="cpu", aligned_index=None, dimensions=None):
    """An uninitialised array of ``shape`` and ``dtype`` laid out for ``backend``, its
    element at ``aligned_index`` (default: the first) on a 64-byte boundary.  A sub-array
    dtype such as ``(np.float64, (2,))`` appends its shape as data dimensions, as in GT4Py.

    Parameters
    ----------
    shape : tuple of int
        The grid axes' sizes (then data dimensions, if ``dimensions`` names them).
    dtype : dtype, default float64
    backend : str, default "cpu"
        ``"cpu"`` or ``"numpy"`` (a NumPy array, K unit-stride) or ``"cuda"`` (a CuPy
        array, I unit-stride).
    aligned_index : tuple of int, optional
        The element placed on a 64-byte boundary: pass the stencil's origin (its halo).
    dimensions : sequence of str, optional
        GT4Py's axis names (``"I"``, ``"J"``, ``"K"``, then data dimensions).

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import storage
    >>> a = storage.empty((6, 6, 10), aligned_index=(1, 1, 0))
    >>> a.shape, a.dtype, a[1:, 1:].ctypes.data % storage.ALIGNMENT
    ((6, 6, 10), dtype('float64'), 0)
    >>> storage.empty((3, 3, 2), (np.float32, (2,))).shape     # a 2-vector per point
    (3, 3, 2, 2)
    """
    backend = _backend(backend)
    order = _backend_order(backend)
    shape, dt, ndata = _normalise(shape, dtype)
    lay = _layout(shape, dt, _data_dims(dimensions, shape, ndata), order)
    index = _aligned_index(aligned_index, shape, ndata)
    if backend == "cuda":
        return _alloc_cupy(lay, dt, index)
    return _alloc_numpy(lay, dt, index)


def full(shape, fill_value, dtype=np.float64, *, backend="cpu", aligned_index=None,
         dimensions=None):
    """Like :func:`empty`, every element set to ``fill_value``.

    Examples
    --------
    >>> from gtscript import storage
    >>> float(storage.full((2, 2, 3), 273.15).min())
    273.15
    """
    arr = empty(shape, dtype, backend=backend, aligned_index=aligned_index,
                dimensions=dimensions)
    arr[...] = fill_value
    return arr


def zeros(shape, dtype=np.float64, *, backend="cpu", aligned_index=None, dimensions=None):
    """Like :func:`empty`, filled with zeros.

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import storage
    >>> z = storage.zeros((3, 3, 4), np.int32)
    >>> z.dtype, int(z.sum())
    (dtype('int32'), 0)
    """
    return full(shape, 0, dtype, backend=backend, aligned_index=aligned_index,
                dimensions=dimensions)


def ones(shape, dtype=np.float64, *, backend="cpu", aligned_index=None, dimensions=None):
    """Like :func:`empty`, filled with ones.

    Examples
    --------
    >>> from gtscript import storage
    >>> int(storage.ones((2, 3, 4)).sum())
    24
    """
    return full(shape, 1, dtype, backend=backend, aligned_index=aligned_index,
                dimensions=dimensions)


def from_array(data, dtype=None, *, backend="cpu", aligned_index=None, dimensions=None):
    """A copy of ``data`` (anything ``np.asarray`` accepts, or a CuPy array for cuda) laid
    out for ``backend``; ``dtype`` defaults to the data's own (values are cast with NumPy's
    rules when it is given).  With a sub-array dtype such as ``(np.float64, (2,))`` the data's
    last axes are its data dimensions: they must have the sub-array's shape, and the copy
    keeps the data's shape (as GT4Py's ``from_array``).

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import storage
    >>> data = np.arange(24.0).reshape(2, 3, 4)
    >>> a = storage.from_array(data, aligned_index=(1, 1, 0))
    >>> bool((a == data).all()), a.strides == data.strides     # same values, padded K
    (True, False)
    """
    backend = _backend(backend)
    if backend == "cuda":
        data = _cupy().asarray(data)
    else:
        _backend_order(backend)
        data = np.asarray(data)
    dtype = data.dtype if dtype is None else dtype
    try:
        sub = np.dtype(dtype).shape
    except TypeError as exc:
        raise TypeError(f"dtype: {exc}") from None
    shape = data.shape
    if sub:
        if len(data.shape) <= len(sub) or data.shape[len(data.shape) - len(sub):] != sub:
            raise ValueError(f"data of shape {data.shape} does not end in the shape {sub} of "
                             f"dtype {np.dtype(dtype)} (its data dimensions)")
        shape = data.shape[:len(data.shape) - len(sub)]
    arr = empty(shape, dtype, backend=backend, aligned_index=aligned_index,
                dimensions=dimensions)
    arr[...] = data
    return arr
