"""Distributed stencils on MPI: a 2-D domain decomposition of I and J, halo exchange, and one
build for all ranks (docs/distributed.md).

Every rank runs the same stencils on its own subdomain (a local array: its interior plus
``halo`` points on each side in I and J, K whole); :func:`Decomposition.exchange` fills the
halos from the neighbouring ranks between steps; :meth:`Decomposition.run` exchanges exactly
what a stencil reads and calls it on this rank's interior, optionally overlapping the exchange
with the computation of the points that need no halo. :func:`stencil` builds a stencil on one
rank and hands the compiled object to the others over MPI.

The transport is MPI through :mod:`mpi4py`; nothing here moves data by any other means.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from typing import Any

import numpy as np

try:
    from mpi4py import MPI
except ImportError as _exc:  # pragma: no cover - the tests always have mpi4py
    raise ImportError(
        "gtscript.distributed needs mpi4py and an MPI library; install them with "
        "pip install 'gtscript[mpi]'  (or: pip install mpi4py mpich)") from _exc

from . import cache as _cache
from . import storage as _storage
from .stencil import stencil as _gt_stencil

__all__ = ["Decomposition", "ExchangeHandle", "DecompositionError", "stencil", "MPI"]

#: The eight neighbour directions (di, dj): faces first, then corners.
DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1))


class DecompositionError(ValueError):
    """A decomposition, or a field, that does not fit; raised with the same text on every
    rank of the communicator (the check is collective, so no rank is left waiting).

    Examples
    --------
    >>> from gtscript import distributed
    >>> try:
    ...     distributed.Decomposition((4, 4, 2), halo=1, dims=(2, 1))   # 2 ranks on 1
    ... except distributed.DecompositionError as err:
    ...     print(err)
    dims (2, 1) give 2 subdomains but the communicator has 1 ranks
    """


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges covering ``range(n)``: the first ``n % parts`` one point
    longer (PETSc's DMDA split), so sizes differ by at most one."""
    base, extra = divmod(n, parts)
    ranges, start = [], 0
    for p in range(parts):
        size = base + (1 if p < extra else 0)
        ranges.append((start, start + size))
        start += size
    return ranges


#: signature -> digest: a step's exchanges repeat the same few signatures, and a lookup
#: costs a fraction of ``repr`` and a hash function (kept small: cleared when it grows)
_DIGESTS: dict = {}


def _digest(value) -> int:
    """A 62-bit digest of ``repr(value)``, the same in every process (Python's ``hash`` is
    salted per process), below _FAILED."""
    digest = _DIGESTS.get(value)
    if digest is None:
        data = repr(value).encode()
        digest = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 2
        if len(_DIGESTS) > 4096:
            _DIGESTS.clear()
        _DIGESTS[value] = digest
    return digest


#: Requests of agreements that timed out: their buffers must outlive them (MPI may still
#: write into them), so they are kept for the life of the process.
_ABANDONED: list = []


def _allreduce_sum(comm, mine, total, timeout, operation) -> None:
    """``Allreduce(mine, total, SUM)``; with a ``timeout`` (seconds), a non-blocking one that
    raises DecompositionError when not every rank has joined it by then."""
    if timeout is None:
        comm.Allreduce(mine, total, op=MPI.SUM)  # buffers, not pickled objects: the fast path
        return
    request = comm.Iallreduce(mine, total, op=MPI.SUM)
    deadline = time.monotonic() + timeout
    polls = 0
    while not request.Test():
        if time.monotonic() > deadline:
            _ABANDONED.append((request, mine, total))
            raise DecompositionError(
                f"not every rank of the communicator reached the {operation} within the "
                f"decomposition's timeout of {timeout:g} s: a rank raised, returned or died "
                f"before it, or is in another collective call")
        polls += 1
        if polls > 1000:  # give a rank that shares this core the time to arrive
            time.sleep(1e-4)


#: What a rank with a message contributes to the agreement (digests stay below 2**62).
_FAILED = 1 << 63
_UINT64 = (1 << 64) - 1


def _agree(comm, message: str | None, cls=DecompositionError, *, signature=(),
           layout=None, timeout=None) -> bool:
    """Collective: raise ``cls`` with the same text on every rank when any rank has a
    ``message`` (the lowest failing rank's text, naming that rank) or when the ranks'
    ``signature`` differ (what the operation moves: a tuple of ``(what, value)`` pairs,
    the operation's name first), else return on every rank whether every rank gave the same
    ``layout``. Every collective operation of this module starts with this call, so ranks
    that went into different operations meet here too and find out from the operation's
    name in the signature.

    When all is well it costs one allreduce of one unsigned 64-bit integer, as a plain
    size check would: the sum (modulo 2**64) of every rank's digest of its signature and
    layout (or _FAILED, for a rank with a message). A rank whose digest times the number of
    ranks is that sum goes on: when the digests agree every rank does; when they differ a
    rank does only if the others' digests happen to sum to that value, as unlikely (about
    2**-62) as two different signatures having one digest. (One integer, not a maximum of
    the digest and of its negation: MPICH reduces two integers on two ranks, or four on four,
    with another algorithm, twice as slow on this machine.) Only when the check fails do the
    ranks gather their messages, signatures and layouts to find out why: layouts alone may
    differ (the exchange then packs every band in I, J, K order)."""
    digest = _FAILED if message is not None else _digest((signature, layout))
    mine = np.array([digest], dtype=np.uint64)
    total = np.empty_like(mine)
    operation = signature[0][1] if signature else "collective operation"
    _allreduce_sum(comm, mine, total, timeout, operation)
    if message is None and int(total[0]) == (comm.size * digest) & _UINT64:
        return True
    everyone = comm.allgather((message, signature, layout))
    failing = [(r, m) for r, (m, _, _) in enumerate(everyone) if m is not None]
    if failing:
        rank, text = failing[0]
        raise cls(f"rank {rank}: {text}" if comm.size > 1 else text)
    signatures = [s for _, s, _ in everyone]
    if any(s != signatures[0] for s in signatures):
        raise cls(_disagreement(signatures))
    return False  # the same operation and fields, in different layouts


def _disagreement(signatures) -> str:
    """What the first rank whose signature differs from rank 0's disagrees on."""
    rank = next(r for r, s in enumerate(signatures) if s != signatures[0])
    mine, theirs = dict(signatures[0]), dict(signatures[rank])
    if mine.get("operation") != theirs.get("operation"):
        return (f"the ranks disagree on the collective operation: rank 0 is in "
                f"{mine.get('operation')}, rank {rank} in {theirs.get('operation')}")
    what = next(k for k in list(mine) + list(theirs) if mine.get(k) != theirs.get(k))
    return (f"the ranks disagree in {mine['operation']} on {what}: rank 0 has "
            f"{_show(mine.get(what))}, rank {rank} has {_show(theirs.get(what))}")


def _describe(arr) -> tuple:
    """A field's dtype and its shape beyond I and J, for a signature (cheap to make: the
    words are written by _show, on the error path only)."""
    return ("array", arr.dtype.str, arr.shape[2:])


def _show(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, tuple) and value[:1] == ("array",):
        return f"{np.dtype(value[1]).name} with shape {value[2]} beyond I and J"
    return str(value)


#: (shape, strides) -> _layout
_LAYOUTS: dict = {}


def _layout(arr) -> tuple:
    """The axes of ``arr`` longer than one point, outermost in memory first."""
    key = (arr.shape, arr.strides)
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = tuple(sorted((a for a in range(arr.ndim) if arr.shape[a] > 1),
                              key=lambda a: (-abs(arr.strides[a]), -a)))
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    return layout


def _root_message(root, size) -> str | None:
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) \
            or not 0 <= root < size:
        return f"root must be a rank of the communicator (0 to {size - 1}), got {root!r}"
    return None


def _root_value(root):
    """``root`` for a signature: an int whatever integer type gave it (``np.int64(0)`` and
    ``0`` agree)."""
    return int(root) if isinstance(root, (int, np.integer)) else repr(root)


def _check_inputs(global_shape, halo, dims, periodic, size) -> tuple | str:
    """Normalised ``(global_shape, halo, dims, periodic)`` or a message saying what is wrong
    (the same inputs give the same answer on every rank)."""
    try:
        shape = tuple(int(n) for n in global_shape)
    except (TypeError, ValueError):
        return f"global_shape must be a tuple of 3 ints, got {global_shape!r}"
    if len(shape) != 3 or any(n < 1 for n in shape):
        return f"global_shape must be 3 positive sizes (I, J, K), got {shape}"
    if isinstance(halo, bool) or not isinstance(halo, (int, np.integer)) or halo < 0:
        return f"halo must be a non-negative int, got {halo!r}"
    halo = int(halo)
    try:
        periodic = tuple(bool(p) for p in periodic)
    except TypeError:
        return f"periodic must be a pair of bools (I, J), got {periodic!r}"
    if len(periodic) != 2:
        return f"periodic must be a pair of bools (I, J), got {periodic!r}"
    if dims is None:
        dims = tuple(MPI.Compute_dims(size, 2))
    else:
        try:
            dims = tuple(int(d) for d in dims)
        except (TypeError, ValueError):
            return f"dims must be a pair of ints (ranks along I, J), got {dims!r}"
        if len(dims) != 2 or any(d < 1 for d in dims):
            return f"dims must be a pair of positive ints (ranks along I, J), got {dims}"
        if dims[0] * dims[1] != size:
            return (f"dims {dims} give {dims[0] * dims[1]} subdomains but the communicator "
                    f"has {size} ranks")
    for axis, name in ((0, "I"), (1, "J")):
        smallest = shape[axis] // dims[axis]
        if smallest < max(halo, 1):
            return (f"global size {shape[axis]} along {name} split over {dims[axis]} ranks "
                    f"gives subdomains of {smallest} points, smaller than the halo {halo} "
                    f"(a halo must come from one neighbour's interior): use fewer ranks "
                    f"along {name} or a smaller halo")
    return shape, halo, dims, periodic


class Decomposition:
    """A 2-D Cartesian decomposition of the I and J axes of ``global_shape`` over ``comm``
    (K is never split).

    ``dims`` (ranks along I and J) defaults to ``MPI.Compute_dims(comm.size, 2)``; sizes need
    not divide evenly (the first ``n % p`` ranks along an axis get one more point).
    ``periodic`` says per axis whether the global grid wraps around. Collective: every rank
    of ``comm`` must construct it with the same arguments; a bad decomposition raises
    :class:`DecompositionError` with the same text on every rank. Every collective method
    first agrees with the other ranks on what it moves (docs/distributed.md, "Errors");
    ``timeout`` (seconds, default None: wait as MPI does) bounds that agreement's wait for
    ranks that never arrive.

    Attributes: ``comm`` (the Cartesian communicator), ``rank``, ``coords``, ``dims``,
    ``periodic``, ``halo``, ``global_shape``, ``global_slices`` (the global index ranges this
    rank owns in I, J and K), ``shape`` (this rank's interior), ``local_shape`` (interior plus
    ``halo`` on each side in I and J), ``origin`` (``(halo, halo, 0)``), ``domain`` (=
    ``shape``), ``neighbours`` (direction ``(di, dj)`` -> rank, or ``MPI.PROC_NULL`` past a
    non-periodic edge).

    Examples
    --------
    Run as ``mpiexec -n 4 python script.py``, each rank computing a quarter; on one process
    (as here) the one rank owns the whole grid and, the grid being periodic, its halo
    exchange wraps around.

    >>> import numpy as np
    >>> import gtscript
    >>> from gtscript import PARALLEL, Field, computation, interval
    >>> from gtscript import distributed
    >>> @distributed.stencil(backend="cpu")
    ... def diffuse(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = inp + 0.1 * (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0]
    ...                            + inp[0, -1, 0] - 4.0 * inp)
    >>> dec = distributed.Decomposition((16, 12, 4), halo=1, periodic=(True, True))
    >>> dec.dims, dec.shape, dec.local_shape
    ((1, 1), (16, 12, 4), (18, 14, 4))
    >>> g = np.random.default_rng(0).random((16, 12, 4))
    >>> inp = dec.scatter(g)                  # this rank's interior, halos zero
    >>> out = dec.zeros()
    >>> dec.run(diffuse, inp, out)            # exchange the halo diffuse reads, then call it
    >>> result = dec.gather(out)              # the global interior, on rank 0
    >>> lap = sum(np.roll(g, s, axis=a) for s in (1, -1) for a in (0, 1)) - 4 * g
    >>> bool(np.allclose(result, g + 0.1 * lap))
    True
    >>> dec.free()
    """

    def __init__(self, global_shape, halo, *, comm=None, dims=None, periodic=(False, False),
                 timeout=None):
        comm = MPI.COMM_WORLD if comm is None else comm
        checked = _check_inputs(global_shape, halo, dims, periodic, comm.size)
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(
                timeout, (int, float, np.integer, np.floating)) or not timeout > 0):
            checked = f"timeout must be None or a positive number of seconds, got {timeout!r}"
        self.timeout = None if timeout is None or isinstance(checked, str) else float(timeout)
        # The inputs themselves must agree: a rank with another global shape would exchange
        # halos of another size with its neighbours and hang or corrupt them.
        mine = checked if not isinstance(checked, str) else None
        everyone = comm.allgather(mine)
        message = checked if isinstance(checked, str) else None
        if message is None and any(other != mine for other in everyone):
            differing = next(r for r, other in enumerate(everyone) if other != mine)
            message = (f"the ranks disagree on the decomposition: this rank has (global_shape,"
                       f" halo, dims, periodic) = {mine}, rank {differing} has "
                       f"{everyone[differing]}")
        _agree(comm, message)
        self.global_shape, self.halo, self.dims, self.periodic = checked
        self.comm = comm.Create_cart(list(self.dims), periods=list(self.periodic), reorder=False)
        self.rank = self.comm.rank
        self.coords = tuple(self.comm.Get_coords(self.rank))
        self._ranges = (_split(self.global_shape[0], self.dims[0]),
                        _split(self.global_shape[1], self.dims[1]))
        (i0, i1), (j0, j1) = (self._ranges[0][self.coords[0]], self._ranges[1][self.coords[1]])
        self.global_slices = (slice(i0, i1), slice(j0, j1), slice(0, self.global_shape[2]))
        self.shape = (i1 - i0, j1 - j0, self.global_shape[2])
        h = self.halo
        self.local_shape = (self.shape[0] + 2 * h, self.shape[1] + 2 * h, self.shape[2])
        self.origin = (h, h, 0)
        self.domain = self.shape
        self.neighbours = {d: self._neighbour(d) for d in DIRECTIONS}
        self._types: dict = {}

    # ---- geometry

    def _neighbour(self, direction) -> int:
        coords = []
        for axis in (0, 1):
            c = self.coords[axis] + direction[axis]
            if not 0 <= c < self.dims[axis]:
                if not self.periodic[axis]:
                    return MPI.PROC_NULL
                c %= self.dims[axis]
            coords.append(c)
        return self.comm.Get_cart_rank(coords)

    def subdomain(self, rank: int) -> tuple[slice, slice, slice]:
        """The global index ranges ``rank`` owns (``global_slices`` of that rank)."""
        ci, cj = self.comm.Get_coords(rank)
        (i0, i1), (j0, j1) = self._ranges[0][ci], self._ranges[1][cj]
        return slice(i0, i1), slice(j0, j1), slice(0, self.global_shape[2])

    def interior(self, local_array):
        """The view of ``local_array`` without its halo."""
        h = self.halo
        return local_array[h:h + self.shape[0], h:h + self.shape[1]]

    def __repr__(self) -> str:
        return (f"<Decomposition {self.global_shape} halo={self.halo} dims={self.dims} "
                f"periodic={self.periodic} rank={self.rank} coords={self.coords} "
                f"owns {self.global_slices[0].start}:{self.global_slices[0].stop}, "
                f"{self.global_slices[1].start}:{self.global_slices[1].stop}>")

    # ---- local arrays

    def empty(self, dtype=np.float64, *, order="C"):
        """An uninitialised local array (``local_shape``; a sub-array dtype such as
        ``(np.float64, (3,))`` appends data dimensions). ``order="C"`` is laid out and
        aligned like ``gtscript.storage`` for the cpu backend (the origin on a 64-byte
        boundary); ``order="F"`` is a Fortran-ordered NumPy array."""
        if order == "C":
            ndata = len(np.dtype(dtype).shape)  # a sub-array dtype's data dimensions
            return _storage.empty(self.local_shape, dtype, backend="cpu",
                                  aligned_index=self.origin + (0,) * ndata)
        if order == "F":
            return np.empty(self.local_shape, dtype=dtype, order="F")
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")

    def zeros(self, dtype=np.float64, *, order="C"):
        """Like :meth:`empty`, filled with zeros."""
        arr = self.empty(dtype, order=order)
        arr[...] = 0
        return arr

    def _field_message(self, name: str, arr) -> str | None:
        """Why ``arr`` cannot be a local field of this decomposition, or None."""
        if not isinstance(arr, np.ndarray):
            return f"{name} must be a NumPy array, got {type(arr).__name__}"
        if arr.ndim < 2 or arr.shape[:2] != self.local_shape[:2]:
            return (f"{name} has shape {arr.shape} but this rank's local arrays are "
                    f"{self.local_shape[:2]} in I and J (interior {self.shape[:2]} plus halo "
                    f"{self.halo} on each side)")
        if arr.dtype.char not in MPI._typedict:
            return f"{name} has dtype {arr.dtype}, which MPI cannot send"
        return None

    def scatter(self, global_array, root: int = 0, *, order="C"):
        """Collective: the interior of ``global_array`` (shape ``global_shape``, data
        dimensions after it allowed; needed on ``root`` only) cut into the local arrays;
        returns this rank's, halos zero. ``root`` must be the same on every rank."""
        comm = self.comm
        message = _root_message(root, comm.size)
        if order not in ("C", "F"):
            message = f"scatter: order must be 'C' or 'F', got {order!r}"
        if message is None and self.rank == root:
            arr = np.asarray(global_array) if global_array is not None else None
            if arr is None or arr.ndim < 3 or arr.shape[:3] != self.global_shape:
                message = (f"scatter: the global array on the root has shape "
                           f"{None if arr is None else arr.shape}, expected "
                           f"{self.global_shape} (plus data dimensions)")
            elif arr.dtype.char not in MPI._typedict:
                message = (f"scatter: the global array has dtype {arr.dtype}, which MPI "
                           f"cannot send")
        # the root must agree: ranks receiving from another rank than the one sending would
        # wait forever or take another message
        _agree(comm, message, signature=(("operation", "scatter"),
                                         ("the root", _root_value(root))),
               timeout=self.timeout)
        spec = comm.bcast((arr.dtype.str, arr.shape[3:]) if self.rank == root else None,  # type: ignore[union-attr]
                          root=root)
        dtype = np.dtype(spec[0]) if not spec[1] else np.dtype((np.dtype(spec[0]), spec[1]))
        local = self.zeros(dtype, order=order)
        if self.rank == root:
            requests, buffers = [], []
            for r in range(comm.size):
                block = np.ascontiguousarray(arr[self.subdomain(r)])  # type: ignore[index]
                if r == root:
                    self.interior(local)[...] = block
                else:
                    buffers.append(block)
                    requests.append(comm.Isend(block, dest=r, tag=7))
            MPI.Request.Waitall(requests)
        else:
            block = np.empty(self.shape + tuple(spec[1]), dtype=np.dtype(spec[0]))
            comm.Recv(block, source=root, tag=7)
            self.interior(local)[...] = block
        return local

    def gather(self, local_array, root: int = 0):
        """Collective: the global interior assembled from every rank's local array, on
        ``root``; None elsewhere. ``root`` and the local arrays' dtype and shape beyond I and
        J must be the same on every rank."""
        comm = self.comm
        message = _root_message(root, comm.size) or self._field_message(
            "gather: the local array", local_array)
        signature: tuple = (("operation", "gather"), ("the root", _root_value(root)))
        if message is None:  # the root receives every block as its own dtype and shape
            signature += (("the local array", _describe(local_array)),)
        _agree(comm, message, signature=signature, timeout=self.timeout)
        block = np.ascontiguousarray(self.interior(local_array))
        if self.rank != root:
            comm.Send(block, dest=root, tag=8)
            return None
        out = np.empty(self.global_shape + local_array.shape[3:], dtype=local_array.dtype)
        for r in range(comm.size):
            where = self.subdomain(r)
            if r == root:
                out[where] = block
            else:
                part = np.empty(self.subdomain_shape(r) + local_array.shape[3:],
                                dtype=local_array.dtype)
                comm.Recv(part, source=r, tag=8)
                out[where] = part
        return out

    def subdomain_shape(self, rank: int) -> tuple[int, int, int]:
        return tuple(s.stop - s.start for s in self.subdomain(rank))

    # ---- halo exchange

    def exchange(self, *fields, widths=None, method=None) -> None:
        """Collective: fill the halo of every field from the neighbours, corners included
        (wrapping around where periodic; halos on a non-periodic outer edge are left as they
        are). ``widths`` (optional, one per field): ``((i_lo, i_hi), (j_lo, j_hi))`` halo
        points to fill on each side, at most ``halo``. Every rank must pass as many fields,
        with the same dtypes, shapes beyond I and J and widths (layouts and ``method`` may
        differ), else every rank raises the same :class:`DecompositionError`."""
        self.start_exchange(*fields, widths=widths, method=method).wait()

    def start_exchange(self, *fields, widths=None, method=None) -> ExchangeHandle:
        """Collective: start the exchange of :meth:`exchange` and return a handle whose
        ``wait()`` completes it. Until then the fields' halos and the interior bands next to
        them must not be written."""
        return self._start(fields, widths, method, (("operation", "exchange"),))

    def _start(self, fields, widths, method, signature) -> ExchangeHandle:
        """start_exchange, after agreeing with every rank on ``signature`` (what the caller
        is doing) and on what moves: the number of fields, each one's dtype, its shape
        beyond I and J, and its widths. Only the memory layouts may differ between ranks."""
        method = method or DEFAULT_METHOD
        message = None
        if method not in ("datatype", "pack"):
            message = f"method must be 'datatype' or 'pack', got {method!r}"
        for n, arr in enumerate(fields):
            message = message or self._field_message(f"field {n} of the exchange", arr)
            if message is None and not arr.flags.writeable:
                message = f"field {n} of the exchange is read-only: its halo cannot be filled"
            if message is None and method == "datatype" and any(
                    s < 0 for n_, s in zip(arr.shape, arr.strides) if n_ > 1):
                message = (f"field {n} of the exchange has negative strides, which "
                           f"method='datatype' cannot describe: use method='pack'")
        if widths is None:
            widths = [((self.halo, self.halo), (self.halo, self.halo))] * len(fields)
        else:
            try:
                widths = [tuple(tuple(int(x) for x in side) for side in w) for w in widths]
            except (TypeError, ValueError):
                message = message or (f"widths must be one ((i_lo, i_hi), (j_lo, j_hi)) per "
                                      f"field, got {widths!r}")
            if message is None and len(widths) != len(fields):
                message = f"widths has {len(widths)} entries for {len(fields)} fields"
            for n, w in enumerate(widths if message is None else ()):
                if len(w) != 2 or any(len(side) != 2 for side in w) or not all(
                        0 <= x <= self.halo for side in w for x in side):
                    message = (f"widths[{n}] = {w!r} must be ((i_lo, i_hi), (j_lo, j_hi)) "
                               f"within the halo {self.halo}")
                    break
        layouts = None
        if message is None:
            signature += (("the number of fields", len(fields)),)
            for n, (arr, w) in enumerate(zip(fields, widths)):
                signature += ((f"field {n}", _describe(arr)), (f"the widths of field {n}", w))
            layouts = tuple(_layout(arr) for arr in fields)
        same_layout = _agree(self.comm, message, signature=signature, layout=layouts,
                             timeout=self.timeout)
        if not same_layout:
            # bands travel in I, J, K order (_wire_order); a datatype would copy a
            # Fortran-ordered band one element at a time (2.7 times slower than NumPy's copy
            # at 128x128x80 on two ranks, docs/distributed.md), so every rank packs
            method = "pack"
        handle = ExchangeHandle(self)
        for tag, (arr, w) in enumerate(zip(fields, widths)):
            # the order in which the elements of a band travel: every rank's memory order when
            # the layouts agree (the datatype then copies whole runs), else I, J, K order
            order = _wire_order(arr, same_layout)
            self._post(handle, arr, w, tag * 8, method, order)
        return handle

    def _bands(self, w, direction):
        """(send slices, receive slices) in I and J for ``direction``: the interior band next
        to that side, and the halo on that side, of the widths ``w``."""
        h = self.halo
        send, recv = [], []
        for axis in (0, 1):
            d, n = direction[axis], self.shape[axis]
            lo, hi = w[axis]
            if d == 0:  # the whole interior along this axis
                send.append(slice(h, h + n))
                recv.append(slice(h, h + n))
            elif d < 0:  # toward the low side: my first points; my low halo
                send.append(slice(h, h + hi))  # the neighbour below fills its HIGH halo
                recv.append(slice(h - lo, h))
            else:
                send.append(slice(h + n - lo, h + n))
                recv.append(slice(h + n, h + n + hi))
        return tuple(send), tuple(recv)

    def _post(self, handle, arr, w, tag_base, method, order) -> None:
        comm = self.comm
        for code, d in enumerate(DIRECTIONS):
            nbr = self.neighbours[d]
            if nbr == MPI.PROC_NULL:
                continue
            send_sl, recv_sl = self._bands(w, d)
            opposite = DIRECTIONS.index((-d[0], -d[1]))
            recv_view = arr[recv_sl]
            if recv_view.size:
                # what a neighbour sent toward -d arrives in my halo on side d
                handle._recv(recv_view, nbr, tag_base + opposite, method, order)
            send_view = arr[send_sl]
            # the receiver's halo on side -d has the widths of that side: both views have the
            # same shape because every rank uses the same widths for a field
            if send_view.size:
                handle._send(send_view, nbr, tag_base + code, method, order)

    def _datatype(self, view, order):
        """The committed MPI datatype of a strided view, from its first element, whose
        elements follow the axes ``order`` (outermost first; cached per shape, strides, dtype
        and order): runs of axes that are contiguous together merged, the unit-stride run as
        one contiguous block (an MPI engine copies blocks much faster than single
        elements)."""
        key = (view.shape, view.strides, view.dtype.str, order)
        t = self._types.get(key)
        if t is not None:
            return t
        base = MPI._typedict[view.dtype.char]  # the collective check refused other dtypes
        runs: list = []  # (count, byte stride), innermost first
        for axis in reversed(order):
            n, stride = view.shape[axis], view.strides[axis]
            if n == 1:
                continue
            if runs and runs[-1][0] * runs[-1][1] == stride:
                runs[-1] = (runs[-1][0] * n, runs[-1][1])
            else:
                runs.append((n, stride))
        t, made = base, []
        if runs and runs[0][1] == view.itemsize:
            t = base.Create_contiguous(runs.pop(0)[0])
            made.append(t)
        for n, stride in runs:
            t = t.Create_hvector(n, 1, stride)
            made.append(t)
        if t is base:  # a single element
            t = base.Dup()
        t.Commit()
        for intermediate in made[:-1]:
            intermediate.Free()  # the committed type keeps what it needs
        self._types[key] = t
        return t

    def free(self) -> None:
        """Free the cached MPI datatypes and the Cartesian communicator."""
        self.__dict__.pop("_region_plans", None)
        for t in self._types.values():
            t.Free()
        self._types.clear()
        if self.comm != MPI.COMM_NULL:
            self.comm.Free()

    # ---- running stencils

    def halo_widths(self, stencil) -> dict:
        """Per field the stencil reads with a horizontal offset: ``((i_lo, i_hi), (j_lo,
        j_hi))``, the halo points it reads on each side (from ``field_info`` extents; for a
        stencil with horizontal regions, from what the regions placed on the global grid
        read on any rank, which makes this call collective)."""
        if _plan(stencil)[1]:
            return dict(self._region_plan(stencil)[0])
        widths = _plan(stencil)[0]
        self._check_halo(widths)
        return dict(widths)

    def _check_halo(self, widths) -> None:
        for name, w in widths.items():
            if max(x for side in w for x in side) > self.halo:
                raise ValueError(f"field {name!r} is read {w} points around the domain, more "
                                 f"than the decomposition's halo {self.halo}")

    def _global_placement(self, offset=(0, 0)) -> dict:
        """The call keywords that place a call's domain (this rank's interior, or a part of it
        starting ``offset`` points in) on the global grid, so regions mean the grid's edges."""
        return {"global_origin": (self.global_slices[0].start + offset[0],
                                  self.global_slices[1].start + offset[1]),
                "global_domain": self.global_shape[:2]}

    def _region_plan(self, stencil) -> tuple:
        """Collective, worked out once per stencil and decomposition layout: for a stencil
        with horizontal regions, the halo widths every rank exchanges (the widest that any
        rank's placement of the regions reads: a region placed away from the grid's edge may
        read more than ``field_info`` says) and whether this rank's overlap split is safe
        (each part accepted, the interior reading no halo). A placement the one compiled
        stencil cannot run raises the same DecompositionError on every rank."""
        target = getattr(stencil, "implementation", stencil)
        # kept by this decomposition (the same on every rank of its communicator, so every
        # rank takes part in the collective below at the same call); the entry holds the
        # stencil, so its id is not reused while the entry lives
        plans = self.__dict__.setdefault("_region_plans", {})
        entry = plans.get(id(target))
        if entry is not None and entry[0] is target:
            return entry[1]
        names = [name for name, info in target.field_info.items()
                 if "I" in info["axes"] and "J" in info["axes"]]
        mine = np.zeros((max(len(names), 1), 4), dtype=np.int64)
        message = None
        try:
            base = Decomposition._read_widths(target)  # its refusals, on every rank
            reach = target._region_reach(self.domain, *self._global_placement().values())
            for row, name in enumerate(names):
                (ilo, ihi), (jlo, jhi) = reach[name]
                mine[row] = (max(0, -ilo), max(0, ihi), max(0, -jlo), max(0, jhi))
            for name, w in base.items():  # never less than field_info says
                row = names.index(name)
                mine[row] = np.maximum(mine[row], (w[0][0], w[0][1], w[1][0], w[1][1]))
        except ValueError as exc:
            message = str(exc)
        # the Allreduce below needs the same stencil (the same rows) on every rank
        _agree(self.comm, message, signature=(
            ("operation", "run (the halo widths of regions)"),
            ("the stencil (its cache key)", _stencil_key(stencil))), timeout=self.timeout)
        widest = np.zeros_like(mine)
        self.comm.Allreduce(mine, widest, op=MPI.MAX)
        widths = {}
        for row, name in enumerate(names):
            w = tuple(int(x) for x in widest[row])
            if any(w):
                if target.field_info[name]["intent"] != "in":
                    raise ValueError(
                        f"field {name!r} is written and read with a horizontal offset: a rank "
                        f"cannot see the values its neighbours write during the same call; "
                        f"split the stencil so the written field is exchanged between the two "
                        f"parts")
                widths[name] = ((w[0], w[1]), (w[2], w[3]))
        self._check_halo(widths)
        plan = (widths, self._overlap_fits(target, widths))
        plans[id(target)] = (target, plan)
        return plan

    def _overlap_fits(self, target, widths) -> bool:
        """Whether every part of this rank's overlap split (_overlap_parts) is a call the
        stencil accepts with its regions placed on the global grid, the interior reading no
        halo (it runs while the exchange writes the halos). Otherwise this rank computes
        its interior in one call after the exchange: the same values."""
        parts = self._overlap_parts(widths)
        if parts is None:
            return True
        ni, nj = self.shape[0], self.shape[1]
        for n, (i0, j0, di, dj) in enumerate(parts):
            try:
                reach = target._region_reach((di, dj, self.shape[2]),
                                             *self._global_placement((i0, j0)).values())
            except ValueError:
                return False
            for name, ((wil, wih), (wjl, wjh)) in widths.items():
                (ilo, ihi), (jlo, jhi) = reach[name]
                if n == 0:  # the interior runs while the halos are being written
                    wil = wih = wjl = wjh = 0
                if i0 + ilo < -wil or i0 + di + ihi > ni + wih or j0 + jlo < -wjl \
                        or j0 + dj + jhi > nj + wjh:
                    return False
        return True

    def _overlap_parts(self, widths):
        """The interior that needs no halo, then the four bands around it, as (i0, j0, di,
        dj) in this rank's interior; None when no point is free of the halo."""
        if not widths:
            return None
        ilo, ihi = max(w[0][0] for w in widths.values()), max(w[0][1] for w in widths.values())
        jlo, jhi = max(w[1][0] for w in widths.values()), max(w[1][1] for w in widths.values())
        ni, nj = self.shape[0], self.shape[1]
        inner = (ni - ilo - ihi, nj - jlo - jhi)
        if inner[0] <= 0 or inner[1] <= 0:
            return None
        # low and high J over the whole I range, then low and high I between them, so every
        # point is computed exactly once
        bands = ((0, 0, ni, jlo), (0, nj - jhi, ni, jhi),
                 (0, jlo, ilo, nj - jlo - jhi), (ni - ihi, jlo, ihi, nj - jlo - jhi))
        return [(ilo, jlo, *inner)] + [b for b in bands if b[2] > 0 and b[3] > 0]

    @staticmethod
    def _read_widths(stencil) -> dict:
        widths = {}
        for name, info in stencil.field_info.items():
            if "I" not in info["axes"] or "J" not in info["axes"]:
                if any(info["extent"][0]) or any(info["extent"][1]):
                    raise ValueError(f"field {name!r} ({info['axes']}) is read with a "
                                     f"horizontal offset: gtscript.distributed exchanges "
                                     f"I-J-K and I-J fields only")
                continue
            (ilo, ihi), (jlo, jhi) = info["extent"][0], info["extent"][1]
            w = ((max(0, -ilo), max(0, ihi)), (max(0, -jlo), max(0, jhi)))
            if w == ((0, 0), (0, 0)):
                continue
            if info["intent"] != "in":
                raise ValueError(
                    f"field {name!r} is written and read with a horizontal offset: a rank "
                    f"cannot see the values its neighbours write during the same call; split "
                    f"the stencil so the written field is exchanged between the two parts")
            widths[name] = w
        return widths

    def run(self, stencil, *args, overlap=False, method=None, **kwargs):
        """Collective: exchange exactly the halos ``stencil`` reads, then call it on this
        rank's interior (``origin`` and ``domain`` are set here; ``args`` are local arrays).
        Horizontal regions refer to the global grid (``global_origin``/``global_domain`` are
        set here too): ``region[I[0], :]`` is the grid's first column, on the ranks that own
        it. ``overlap=True`` computes the points that need no halo while the exchange is in
        flight, then the four boundary bands; the result is bit for bit the same."""
        for key in ("origin", "domain", "global_origin", "global_domain"):
            if key in kwargs:
                raise TypeError(f"run() sets {key} itself (this rank's interior on the "
                                f"global grid)")
        regions = _plan(stencil)[1]
        if regions:
            widths, overlap_fits = self._region_plan(stencil)
        else:
            widths, overlap_fits = self.halo_widths(stencil), True
        bound = _bind(stencil, args, kwargs)
        fields = [bound[name] for name in widths]
        field_widths = list(widths.values())
        h = self.halo
        # what every rank must agree on besides the exchanged fields: the stencil (its
        # cache key: the same code) and the dtype and shape of its other field arguments
        signature = (("operation", "run"),
                     ("the stencil (its cache key)", _stencil_key(stencil)))
        signature += tuple((f"argument {name!r}", _describe(value))
                           for name, value in bound.items()
                           if name not in widths and isinstance(value, np.ndarray))

        def call(i0=0, j0=0, shape=None):
            place = self._global_placement((i0, j0)) if regions else {}
            stencil(*args, origin=(h + i0, h + j0, 0), domain=shape or self.domain, **kwargs,
                    **place)

        parts = self._overlap_parts(widths) if overlap else None
        if parts is None:
            if fields:
                self._start(fields, field_widths, method, signature).wait()
            call()
            return
        handle = self._start(fields, field_widths, method, signature)
        if not overlap_fits:  # a region this rank's parts cannot run alone: one call
            handle.wait()
            call()
            return
        nk = self.shape[2]
        (i0, j0, di, dj), bands = parts[0], parts[1:]
        try:
            call(i0, j0, (di, dj, nk))
        finally:
            handle.wait()
        for i0, j0, di, dj in bands:
            call(i0, j0, (di, dj, nk))


def _stencil_key(stencil) -> str:
    """The built stencil's cache key: equal keys, the same code (docs/caching.md)."""
    target = getattr(stencil, "implementation", stencil)  # a lazy stencil: the built one
    return getattr(target, "cache_key", None) or target.build_info.get("cache_key", "")


def _plan(stencil) -> tuple[dict, bool]:
    """What ``run`` needs to know of a stencil, worked out once per stencil object (the
    analysed IR does not change): the read widths and whether it has horizontal regions."""
    target = getattr(stencil, "implementation", stencil)  # a lazy stencil: the built one
    plan = target.__dict__.get("_distributed_plan")
    if plan is None:
        plan = target.__dict__["_distributed_plan"] = (Decomposition._read_widths(target),
                                                       _has_regions(target))
    return plan


def _has_regions(stencil) -> bool:
    """Whether any statement of the analysed IR carries horizontal region boxes
    (docs/architecture.md, "The analysed-IR tree")."""
    tree = stencil.__dict__.get("_tree_cache") or stencil.ir_tree()

    def walk(stmts):
        for stmt in stmts:
            if stmt[0] == "assign" and stmt[7] is not None:
                return True
            if stmt[0] == "while" and (stmt[4] is not None or walk(stmt[6])):
                return True
        return False

    return any(walk(stmts) for _, intervals in tree["computations"]
               for _, _, stmts in intervals)


def _bind(stencil, args, kwargs) -> dict:
    """Argument name -> value, as the stencil will bind them (positional in parameter order,
    then keywords)."""
    names = [p[1] for p in stencil._params] if hasattr(stencil, "_params") else list(
        stencil.field_info)
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    missing = [name for name in names if name not in bound and name in stencil.field_info]
    if missing:
        raise TypeError(f"run(): missing field argument(s) {', '.join(map(repr, missing))}")
    return bound


class ExchangeHandle:
    """An exchange in flight: ``wait()`` completes it (receives land in the halos).

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import distributed
    >>> dec = distributed.Decomposition((4, 3, 1), halo=1, periodic=(True, True))
    >>> field = dec.scatter(np.arange(12.0).reshape(4, 3, 1))
    >>> handle = dec.start_exchange(field)   # compute what needs no halo meanwhile
    >>> handle.wait()
    >>> field[0, 1:-1, 0].tolist()           # the west halo: the east edge, wrapped around
    [9.0, 10.0, 11.0]
    >>> dec.free()
    """

    def __init__(self, decomposition: Decomposition):
        self._dec = decomposition
        self._requests: list = []
        self._unpack: list = []  # (halo view, contiguous receive buffer)
        self._keep: list = []    # send buffers that must live until the sends complete
        self.done = False

    # Both methods move a band's elements in the axes ``order`` (_wire_order), so ranks
    # with different methods or memory layouts understand each other's messages.

    def _recv(self, view, source, tag, method, order):
        comm = self._dec.comm
        if method == "pack":
            view = view.transpose(order)
            buf = np.empty(view.shape, dtype=view.dtype)
            self._unpack.append((view, buf))
            self._requests.append(comm.Irecv(buf, source=source, tag=tag))
        else:
            self._requests.append(comm.Irecv(_message(self._dec, view, order), source=source,
                                             tag=tag))

    def _send(self, view, dest, tag, method, order):
        comm = self._dec.comm
        if method == "pack":
            buf = np.ascontiguousarray(view.transpose(order))
            self._keep.append(buf)
            self._requests.append(comm.Isend(buf, dest=dest, tag=tag))
        else:
            self._keep.append(view)
            self._requests.append(comm.Isend(_message(self._dec, view, order), dest=dest,
                                             tag=tag))

    def wait(self) -> None:
        """Complete the exchange (idempotent)."""
        if self.done:
            return
        MPI.Request.Waitall(self._requests)
        for view, buf in self._unpack:
            view[...] = buf
        self._requests, self._unpack, self._keep = [], [], []
        self.done = True


def _message(dec: Decomposition, view, order):
    """An mpi4py message for a strided view: the bytes from its first element to its last,
    described by a derived datatype (no copy) that visits the elements in the axes
    ``order``. The collective check refused negative strides."""
    span = sum((n - 1) * s for n, s in zip(view.shape, view.strides)) + view.itemsize
    buf = MPI.buffer.fromaddress(view.ctypes.data, span, readonly=False)
    return [buf, 1, dec._datatype(view, order)]


def _wire_order(arr, same_layout: bool) -> tuple:
    """The axes in which the elements of ``arr``'s bands travel, outermost first: its memory
    order when every rank's field has the same layout (``_layout``: then the order is the
    same on every rank, and runs of contiguous memory become blocks), else I, J, K (and data
    dimensions) on every rank, whatever its layout: a Fortran-ordered band read in memory
    order by one rank and a C-ordered one written in memory order by its neighbour would
    land transposed."""
    if not same_layout:
        return tuple(range(arr.ndim))
    outer = _layout(arr)
    return outer + tuple(a for a in range(arr.ndim) if a not in outer)


#: The exchange method used when none is given ("datatype" or "pack"); the faster on this
#: machine by benchmarks/halo_exchange.py (docs/distributed.md).
DEFAULT_METHOD = "datatype"


# ---- one build for all ranks


def stencil(backend: Any = None, definition: Any = None, *, comm: Any = None, root: int = 0,
            **options: Any) -> Any:
    """Collective: :func:`gtscript.stencil` with one compile for all ranks of ``comm``
    (default ``COMM_WORLD``). ``root`` builds (or loads from its disk cache) and broadcasts
    the cache entry's files; every other rank writes them into its own disk cache (if the
    entry is not there already, e.g. a shared file system) and loads the stencil from it,
    so its ``build_info["module_source"]`` is ``"disk"``. A build error on the root is
    raised on every rank. Without a usable disk cache a rank builds for itself.

    Examples
    --------
    >>> import numpy as np
    >>> from gtscript import PARALLEL, Field, computation, interval, distributed
    >>> @distributed.stencil(backend="cpu")
    ... def copy(inp: Field[np.float64], out: Field[np.float64]):
    ...     with computation(PARALLEL), interval(...):
    ...         out = inp
    >>> copy.build_info["module_source"] in ("build", "memory", "disk")
    True
    """
    if callable(backend) and definition is None:
        backend, definition = "cpu", backend

    def decorator(func):
        return _build_once(func, backend, comm, root, options)

    return decorator if definition is None else decorator(definition)


def _build_once(func, backend, comm, root, options):
    comm = MPI.COMM_WORLD if comm is None else comm
    # every rank must build from the same root, or it waits for a broadcast nobody sends
    _agree(comm, _root_message(root, comm.size), signature=(
        ("operation", "distributed.stencil"), ("the root", _root_value(root)),
        ("the backend", backend), ("the definition", getattr(func, "__qualname__", repr(func)))))
    if comm.rank == root:
        try:
            built = _gt_stencil(backend, func, **options)
        except BaseException as exc:
            comm.bcast(("error", type(exc).__name__, str(exc)), root=root)
            raise
        key = built.build_info.get("cache_key", "")
        comm.bcast(("ok", key, _entry_files(key)), root=root)
        return built
    reply = comm.bcast(None, root=root)
    if reply[0] == "error":
        raise RuntimeError(f"building the stencil on rank {root} failed: {reply[1]}: "
                           f"{reply[2]}")
    _, key, files = reply
    if files:
        _store_entry(key, files)
    options = {k: v for k, v in options.items() if k != "rebuild"}  # the root rebuilt it
    return _gt_stencil(backend, func, **options)


def _entry_files(key: str) -> dict | None:
    """The files of the disk cache entry ``key`` (name -> bytes), or None."""
    if not key:
        return None
    entry = os.path.join(_cache.path(), key)
    try:
        names = sorted(os.listdir(entry))
        files = {}
        for name in names:
            with open(os.path.join(entry, name), "rb") as f:
                files[name] = f.read()
        return files
    except OSError:
        return None


def _store_entry(key: str, files: dict) -> None:
    """Write a broadcast entry into this rank's cache directory as the disk cache does:
    a private temporary directory renamed to the key, so a concurrent reader sees all or
    nothing. The core still checks the metadata, sizes and hashes before loading it."""
    directory = _cache.path()
    entry = os.path.join(directory, key)
    if os.path.isdir(entry):
        return
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=directory)
        for name, data in files.items():
            if os.sep in name or name.startswith("."):
                raise OSError(f"unexpected file name {name!r} in a cache entry")
            fd = os.open(os.path.join(tmp, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        try:
            os.rename(tmp, entry)
        except OSError:  # another process on this node stored it first: theirs is as good
            for name in files:
                os.unlink(os.path.join(tmp, name))
            os.rmdir(tmp)
    except OSError:
        pass  # no usable disk cache here: the build below compiles on this rank
