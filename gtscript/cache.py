"""The compiled-stencil cache (see docs/caching.md).

A stencil compiles once per machine: its code is found again by a SHA-256 key of the
analysed IR, the options, the target and the versions, first in this process's memory, then
on disk under :func:`path`. These functions are thin wrappers over the C core.

Environment:

``GTSCRIPT_CACHE_DIR``
    the disk cache directory (default ``$XDG_CACHE_HOME/gtscript`` or ``~/.cache/gtscript``);
    it must be private (owned by you, not writable by group or others). Read at every use.
``GTSCRIPT_CACHE_MAX_BYTES``
    size limit of the disk cache; least recently used entries are evicted beyond it
    (default 1 GiB).
``GTSCRIPT_CACHE_MEMORY_ENTRIES``
    how many stencils the memory level (the core's key table and the decorator's pre-key
    table, each) keeps loaded; the least recently used are dropped beyond it (default 256).
"""

from __future__ import annotations

# The core's disk level reads each entry's metadata with the json module: imported with the
# package, so that the first disk hit of a process does not pay for importing it (~3 ms).
import json  # noqa: F401

from . import _core, _index
from .stencil import _memory_cache, _memory_lock


def path() -> str:
    """The disk cache directory, as configured now (it may not exist yet).

    Examples
    --------
    >>> import os
    >>> import gtscript
    >>> gtscript.cache.path() == os.environ.get("GTSCRIPT_CACHE_DIR", gtscript.cache.path())
    True
    """
    return _core.cache_path()


def info() -> dict:
    """The disk cache's size and this process's activity.

    Keys: ``path``, ``entries`` and ``bytes`` (on disk), ``max_bytes``, ``memory_entries``
    (loaded modules kept by key), and this process's counts: ``hits`` (``memory_hits`` +
    ``disk_hits``), ``misses`` (fresh builds), ``invalid_entries`` (disk entries found
    corrupt or foreign and rebuilt) and ``stores``. Re-decorating the very same definition
    is answered before the key is computed and is not counted.

    Examples
    --------
    >>> import gtscript
    >>> info = gtscript.cache.info()
    >>> sorted(info)  # doctest: +NORMALIZE_WHITESPACE
    ['bytes', 'disk_hits', 'entries', 'hits', 'invalid_entries', 'max_bytes',
     'memory_entries', 'memory_hits', 'misses', 'path', 'stores']
    >>> info["hits"] == info["memory_hits"] + info["disk_hits"]
    True
    """
    return _core.cache_info()


def clear() -> int:
    """Forget every cached stencil: the decorator's table, the in-memory modules and every
    disk entry. Stencil objects that exist keep working. Returns the number of disk entries
    removed.

    Examples
    --------
    >>> import os, tempfile
    >>> import gtscript
    >>> saved = os.environ.get("GTSCRIPT_CACHE_DIR")
    >>> private = tempfile.TemporaryDirectory()
    >>> os.environ["GTSCRIPT_CACHE_DIR"] = private.name  # read at every use
    >>> gtscript.cache.clear()
    0
    >>> gtscript.cache.info()["entries"]
    0
    >>> if saved is None:
    ...     del os.environ["GTSCRIPT_CACHE_DIR"]
    ... else:
    ...     os.environ["GTSCRIPT_CACHE_DIR"] = saved
    >>> private.cleanup()
    """
    with _memory_lock:
        _memory_cache.clear()
    _index.clear()
    return _core.cache_clear()


__all__ = ["path", "info", "clear"]
