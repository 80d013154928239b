"""The disk index of the decorator's pre-key: ``index-<pre-key>`` files in the cache
directory, each holding the cache key and the definition tree a definition lowered to, so
that a fresh process decorating an unchanged definition skips the Python frontend (source
capture, parsing, translation) and hands the stored tree straight to the C core, which
analyses it, computes the key and loads the code from the disk cache (docs/caching.md).

The index never decides which code runs: the core computes the key from the tree as always,
and a stored key that disagrees makes the decorator take the normal path. What the index must
get right is that the tree is the one the definition lowers to today, so the pre-key holds
everything the frontend reads (gtscript/frontend/fingerprint.py) and the versions of
everything that lowers it (``environment_token``).

Format: a magic line, a line of the cache key and ``E`` (an entry of the disk cache holds
that key's code) or ``N`` (none: the numpy backend's), a line of the payload's SHA-256, and
the payload (marshal of pre-key, cache key, tree). The key line is what the core's eviction
(csrc/cache/evict.c) reads: an ``E`` file whose entry is gone goes with it, a file of another
format is removed, and beyond a count (4096) the oldest files go, of every backend: each store
here asks the core to trim them (``_core.cache_trim_index``), since the numpy backend stores no
entry whose eviction would.

Files follow the entries' rules (csrc/cache/): the checked directory is opened once by the
core and every access is relative to that descriptor; a file is written under a temporary
name and renamed into place (concurrent writers: the last rename wins, every version is
whole); files that are not regular, too large, truncated, corrupt (SHA-256 of the payload)
or stored under another pre-key are ignored.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import secrets
import stat
import sys

from . import _core

_MAGIC = b"gtscript-index-2\n"
_PREFIX = "index-"
_TEMP_PREFIX = ".idx-tmp-"
_MAX_BYTES = 64 << 20
_environment: str | None = None


def environment_token() -> str:
    """What lowers a definition, besides the definition: the Python version (its AST and the
    marshal format), gtscript's version, and the size, modification and change times of every
    file of the package and of the compiled core (an edited or reinstalled gtscript misses;
    the change time, which no copy or ``utime`` can set, catches a rewrite that keeps the
    size and modification time; the core's own SHA-256 is in every cache key besides)."""
    global _environment
    if _environment is None:
        package = os.path.dirname(os.path.abspath(__file__))
        parts = [sys.version, sys.implementation.cache_tag or "", _version()]
        for root, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".so", ".pyd")):
                    path = os.path.join(root, name)
                    try:
                        sb = os.stat(path)
                    except OSError:
                        continue
                    parts.append(f"{os.path.relpath(path, package)}:{sb.st_size}:"
                                 f"{sb.st_mtime_ns}:{sb.st_ctime_ns}:{sb.st_ino}")
        _environment = "\n".join(parts)
    return _environment


def _version() -> str:
    from . import __version__
    return __version__


def pre_key(*parts) -> str:
    """The index name of a decoration: SHA-256 of its pre-key parts and the environment."""
    text = repr((environment_token(),) + parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _open_dir(create: bool) -> int | None:
    try:
        return _core.cache_dir_fd(create)
    except OSError:
        return None  # an unsafe directory: the core says why when it looks up the code


def load(key: str):
    """``(cache key, definition tree)`` stored under pre-key ``key``, or None."""
    dirfd = _open_dir(False)
    if dirfd is None:
        return None
    try:
        try:
            fd = os.open(_PREFIX + key, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=dirfd)
        except OSError:
            return None
        try:
            sb = os.fstat(fd)
            if not stat.S_ISREG(sb.st_mode) or sb.st_size > _MAX_BYTES:
                return None
            chunks, size = [], 0
            while size <= sb.st_size:
                chunk = os.read(fd, sb.st_size + 1 - size)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
        finally:
            os.close(fd)
    except OSError:
        return None
    finally:
        os.close(dirfd)
    return _decode(key, data)


def _decode(key: str, data: bytes):
    head = len(_MAGIC) + 67  # the key line: 64 hex digits, a space, E or N, a newline
    if (not data.startswith(_MAGIC) or len(data) < head + 65 or data[head - 1:head] != b"\n"
            or data[head + 64:head + 65] != b"\n"):
        return None
    payload = data[head + 65:]
    if hashlib.sha256(payload).hexdigest().encode() != data[head:head + 64]:
        return None  # truncated or damaged
    try:
        stored_key, cache_key, tree = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if (stored_key != key or not isinstance(cache_key, str) or len(cache_key) != 64
            or not isinstance(tree, dict)
            or data[len(_MAGIC):len(_MAGIC) + 64] != cache_key.encode("ascii", "replace")):
        return None  # another pre-key's file under this name, or a damaged key line
    return cache_key, tree


def store(key: str, cache_key: str, tree: dict) -> None:
    """Remember pre-key ``key`` -> ``(cache_key, tree)``; failures only mean no index."""
    try:
        payload = marshal.dumps((key, cache_key, tree))
    except ValueError:
        return  # a tree holding values marshal cannot write: no index for it
    dirfd = _open_dir(True)
    if dirfd is None:
        return
    temp = _TEMP_PREFIX + secrets.token_hex(8)
    try:
        try:  # does an entry of the disk cache hold the code? (not for the numpy backend)
            entry = stat.S_ISDIR(os.stat(cache_key, dir_fd=dirfd, follow_symlinks=False).st_mode)
        except (OSError, ValueError):
            entry = False
        data = (_MAGIC + cache_key.encode("ascii", "replace") + (b" E\n" if entry else b" N\n")
                + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600, dir_fd=dirfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, _PREFIX + key, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        _core.cache_trim_index(dirfd)  # at most 4096 index files (docs/caching.md)
    except OSError:
        try:
            os.unlink(temp, dir_fd=dirfd)
        except OSError:
            pass
    finally:
        os.close(dirfd)


def clear() -> int:
    """Remove every index file (and temporaries left by writers that died); their count."""
    dirfd = _open_dir(False)
    if dirfd is None:
        return 0
    removed = 0
    try:
        for name in os.listdir(dirfd):
            if name.startswith((_PREFIX, _TEMP_PREFIX)):
                try:
                    os.unlink(name, dir_fd=dirfd)
                    removed += name.startswith(_PREFIX)
                except OSError:
                    pass
    finally:
        os.close(dirfd)
    return removed
