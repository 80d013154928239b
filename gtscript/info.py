"""What a stencil object reports about its arguments and domain, in GT4Py's shapes.

GT4Py's stencil objects describe themselves with ``field_info[name]`` (access kind, boundary,
axes, data dimensions, dtype), ``parameter_info[name]`` and ``domain_info``; code written for
GT4Py reads these to size halos and allocate arrays.  The classes here give the same
attributes.  A :class:`FieldInfo` also stays the mapping gtscript has always returned
(``info["extent"]``, ``info["intent"]``, ``info["dtype"]`` as a name, ``info["axes"]`` as a
string, ``info["data_dims"]``), so both spellings work on one object.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

__all__ = ["AccessKind", "Boundary", "DomainInfo", "FieldInfo", "ParameterInfo"]


class AccessKind(enum.IntFlag):
    """How a stencil uses an argument (GT4Py's flag values: READ | WRITE is READ_WRITE).

    Examples
    --------
    >>> from gtscript.info import AccessKind
    >>> AccessKind.READ | AccessKind.WRITE == AccessKind.READ_WRITE
    True
    >>> str(AccessKind.WRITE)
    'WRITE'
    """

    NONE = 0
    READ = 1
    WRITE = 2
    READ_WRITE = READ | WRITE

    def __str__(self) -> str:
        return str(self.name)


_ACCESS_OF_INTENT = {
    "in": AccessKind.READ,
    "out": AccessKind.WRITE,
    "inout": AccessKind.READ_WRITE,
    "unused": AccessKind.NONE,
}


class Boundary(tuple):
    """``((i_lo, i_hi), (j_lo, j_hi), (k_lo, k_hi))``: how many points around the compute
    domain a field's accesses reach, on each side of each axis. In I and J never negative (an
    access that stays inside the domain needs no halo); in K, GT4Py's count, which is negative
    where every access stays that many levels inside the domain.

    Examples
    --------
    >>> from gtscript.info import Boundary
    >>> b = Boundary.from_extent(((-1, 2), (0, 0), (0, 1)))
    >>> b, b.lower_indices, b.frame_size
    (Boundary(((1, 2), (0, 0), (0, 1))), (1, 0, 0), (3, 0, 1))
    """

    __slots__ = ()

    @classmethod
    def from_extent(cls, extent) -> Boundary:
        """From an access extent ``((i_min, i_max), ...)`` of signed offsets."""
        return cls((max(0, -lo), max(0, hi)) for lo, hi in extent)

    @property
    def lower_indices(self) -> tuple[int, ...]:
        return tuple(lo for lo, _ in self)

    @property
    def upper_indices(self) -> tuple[int, ...]:
        return tuple(hi for _, hi in self)

    @property
    def frame_size(self) -> tuple[int, ...]:
        """Points of halo per axis, both sides together."""
        return tuple(lo + hi for lo, hi in self)

    def __repr__(self) -> str:
        return f"Boundary({tuple(self)!r})"


class FieldInfo(dict):
    """One field argument: a mapping (``extent``, ``intent``, ``dtype``, ``axes``,
    ``data_dims``) with GT4Py's attributes on top (``access``, ``boundary``, ``axes`` as a
    tuple, ``data_dims``, ``dtype`` as a :class:`numpy.dtype`).

    ``gt4py_facts`` (from the compiled stencil) is ``(read_first, (k_lo, k_hi))``: whether the
    stencil reads the field before it first writes it, in program order (GT4Py's READ_WRITE;
    written first, it is WRITE however often it is read afterwards), and GT4Py's K boundary,
    which counts each access from the interval it is in.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="cpu")
    ... def update(q: Field[np.float64], tend: Field[np.float64], dt: float):
    ...     with computation(PARALLEL), interval(...):
    ...         q = q + dt * tend[0, 1, 0]
    >>> info = update.field_info["tend"]
    >>> dict(info)
    {'extent': ((0, 0), (0, 1), (0, 0)), 'intent': 'in', 'dtype': 'float64', 'axes': 'IJK', 'data_dims': ()}
    >>> info.access, info.boundary, info.dtype
    (<AccessKind.READ: 1>, Boundary(((0, 0), (0, 1), (0, 0))), dtype('float64'))
    >>> str(update.field_info["q"].access)
    'READ_WRITE'
    """

    def __init__(self, *args, gt4py_facts=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._gt4py_facts = gt4py_facts

    @property
    def access(self) -> AccessKind:
        access = _ACCESS_OF_INTENT[self["intent"]]
        if access is AccessKind.READ_WRITE and self._gt4py_facts is not None \
                and not self._gt4py_facts[0]:
            return AccessKind.WRITE
        return access

    @property
    def boundary(self) -> Boundary:
        horizontal = Boundary.from_extent(self["extent"])
        if self._gt4py_facts is None or self["intent"] == "unused":
            return horizontal
        return Boundary((*horizontal[:2], tuple(self._gt4py_facts[1])))

    @property
    def axes(self) -> tuple[str, ...]:
        return tuple(self["axes"])

    @property
    def data_dims(self) -> tuple[int, ...]:
        return tuple(self["data_dims"])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self["dtype"])

    @property
    def domain_mask(self) -> tuple[bool, ...]:
        """Per axis I, J, K: whether the field has it."""
        return tuple(axis in self["axes"] for axis in "IJK")

    @property
    def domain_ndim(self) -> int:
        return len(self["axes"])

    @property
    def mask(self) -> tuple[bool, ...]:
        """:attr:`domain_mask`, then True per data dimension."""
        return (*self.domain_mask, *((True,) * len(self["data_dims"])))

    @property
    def ndim(self) -> int:
        """Dimensions of the array the field is called with."""
        return len(self["axes"]) + len(self["data_dims"])


@dataclass(frozen=True)
class ParameterInfo:
    """One scalar argument: whether the stencil reads it, and its dtype.

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="cpu")
    ... def axpy(x: Field[np.float64], y: Field[np.float64], a: float):
    ...     with computation(PARALLEL), interval(...):
    ...         y = a * x + y
    >>> axpy.parameter_info["a"]
    ParameterInfo(access=<AccessKind.READ: 1>, dtype=dtype('float64'))
    """

    access: AccessKind
    dtype: np.dtype


@dataclass(frozen=True)
class DomainInfo:
    """The iteration space: I and J are parallel, K is swept (possibly in order).

    Examples
    --------
    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> @gtscript.stencil(backend="cpu")
    ... def vdiff(q: Field[np.float64], d: Field[np.float64]):
    ...     with computation(PARALLEL), interval(1, -1):
    ...         d = q[0, 0, 1] - q[0, 0, -1]
    >>> vdiff.domain_info
    DomainInfo(parallel_axes=('I', 'J'), sequential_axis='K', min_sequential_axis_size=3, ndim=3)
    """

    parallel_axes: tuple[str, ...]
    sequential_axis: str
    min_sequential_axis_size: int
    ndim: int
