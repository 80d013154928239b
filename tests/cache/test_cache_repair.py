"""The disk cache repairs what it finds broken and bounds its index files (docs/caching.md):
an entry whose kernel.o is a directory is replaced by the rebuild (not rebuilt at every
decoration), and index files of every backend - the numpy backend's name no entry, whose
eviction would bound them - stay at most 4096.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import warnings
from pathlib import Path

import pytest

from cache_helpers import (  # noqa: F401
    SHAPE, cache_dir, check, clear_memory_only, fresh_scale, make, shift_defn)
from gtscript import _core

MAX_INDEXES, LOW_WATER = 4096, 4096 - 4096 // 8  # csrc/cache/evict.c


def valid_entry(entry: Path) -> bool:
    meta = json.loads((entry / "meta.json").read_text())
    obj = entry / "kernel.o"
    return (meta["key"] == entry.name and stat.S_ISREG(obj.lstat().st_mode)
            and obj.stat().st_size == meta["object"]["size"])


@pytest.mark.parametrize("contents", ["empty", "holding a file", "holding a directory"])
def test_kernel_o_that_is_a_directory_is_repaired(cache_dir, contents):
    scale = fresh_scale()
    key = make(scale).cache_key
    entry = cache_dir / key
    assert valid_entry(entry)
    clear_memory_only(cache_dir)
    (entry / "kernel.o").unlink()
    (entry / "kernel.o").mkdir()
    if contents == "holding a file":
        (entry / "kernel.o" / "x").write_bytes(b"x")
    elif contents == "holding a directory":
        (entry / "kernel.o" / "sub").mkdir()
        (entry / "kernel.o" / "sub" / "y").write_bytes(b"y")
    with pytest.warns(RuntimeWarning, match="ignoring the entry .*not a regular file"):
        st = make(scale)
    assert st.build_info["module_source"] == "build"
    check(st, scale)
    assert valid_entry(entry)  # repaired, not only rebuilt
    assert not [p for p in cache_dir.iterdir() if p.name.startswith((".del-", ".tmp-"))]
    clear_memory_only(cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning: the broken entry is gone
        again = make(scale)
    assert again.build_info["module_source"] == "disk"
    check(again, scale)


def fake_index(cache_dir: Path, n: int, entry: bool) -> Path:
    """An index file as gtscript/_index.py writes it (its header is what the eviction reads)
    naming no entry ("N", the numpy backend's) or an entry ("E")."""
    payload = f"payload {n}".encode()
    cache_key = hashlib.sha256(f"key {n}".encode()).hexdigest()
    data = (b"gtscript-index-2\n" + cache_key.encode() + (b" E\n" if entry else b" N\n")
            + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    path = cache_dir / f"index-{hashlib.sha256(payload).hexdigest()}"
    path.write_bytes(data)
    return path


def index_files(cache_dir: Path) -> set[str]:
    return {p.name for p in cache_dir.iterdir() if p.name.startswith("index-")}


def test_numpy_index_files_are_capped(cache_dir):
    """46,000 numpy stencils left 46,192 index files: a store beyond 4096 now trims them to
    the newest (the low-water mark keeps a full directory from being scanned at every store)."""
    fd = _core.cache_dir_fd(True)
    os.close(fd)
    old = [fake_index(cache_dir, n, entry=False) for n in range(MAX_INDEXES + 10)]
    for n, path in enumerate(old):  # file n is n seconds newer than file 0
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    scale = fresh_scale()
    st = make(scale, "numpy")  # a miss: its index file is stored, then the files trimmed
    check(st, scale)
    left = index_files(cache_dir)
    assert len(left) == LOW_WATER
    newest = {p.name for p in old[-(LOW_WATER - 1):]}
    assert newest < left  # the newest stayed, the new stencil's own file too
    (mine,) = left - newest
    assert mine not in {p.name for p in old}
    # under the limit, a store removes nothing
    scale = fresh_scale()
    check(make(scale, "numpy"), scale)
    assert len(index_files(cache_dir)) == LOW_WATER + 1


def test_index_files_naming_live_entries_are_capped_too(cache_dir):
    """Index files of the cpu backend (one per definition site, all naming entries that
    stay) count towards the same limit; an orphan (its entry gone) goes at any count."""
    scale = fresh_scale()
    key = make(scale).cache_key
    for n in range(MAX_INDEXES + 1):
        path = fake_index(cache_dir, n, entry=True)
        data = path.read_bytes().replace(hashlib.sha256(f"key {n}".encode()).hexdigest().encode(),
                                         key.encode(), 1)
        path.write_bytes(data)
        os.utime(path, (1_000_000 + n, 1_000_000 + n))
    orphan = fake_index(cache_dir, -1, entry=True)  # names an entry that does not exist
    clear_memory_only(cache_dir)
    scale2 = fresh_scale()
    check(make(scale2), scale2)  # a cpu store: the core's eviction runs, then the index's trim
    left = index_files(cache_dir)
    assert orphan.name not in left
    assert len(left) <= MAX_INDEXES
