"""Disk cache hardening (docs/caching.md): entries that are not directories are replaced, files
that are not regular files never block a build, and the cache directory is checked once through
a descriptor that every later access goes through.

Each test uses its own private cache directory. Work that could block forever before the fix (a
FIFO in an entry) runs in a subprocess with a timeout, so a regression fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import gtscript
from cache_helpers import (  # noqa: F401
    SHAPE, cache_dir, check, clear_memory_only, fresh_scale, make, shift_defn)


def valid_entry(entry: Path, key: str | None = None) -> bool:
    if entry.is_symlink() or not entry.is_dir():
        return False
    meta = json.loads((entry / "meta.json").read_text())
    return meta["key"] == (key or entry.name) and (entry / "kernel.o").stat().st_size == meta["object"]["size"]


def build_then_forget(cache_dir, scale):
    """Builds a stencil (storing its entry) and empties the memory level; returns the key."""
    key = make(scale).cache_key
    assert valid_entry(cache_dir / key)
    clear_memory_only(cache_dir)
    return key


# ======================================================================= non-directory entries

@pytest.mark.parametrize("kind", ["regular file", "symlink to a valid entry", "dangling symlink"])
def test_an_entry_that_is_not_a_directory_is_reported_and_replaced(kind, cache_dir, tmp_path):
    scale = fresh_scale()
    key = build_then_forget(cache_dir, scale)
    entry = cache_dir / key
    elsewhere = tmp_path / "elsewhere"
    if kind == "regular file":
        shutil.rmtree(entry)
        entry.write_bytes(b"not an entry")
    else:
        os.rename(entry, elsewhere)
        entry.symlink_to(elsewhere if kind == "symlink to a valid entry" else tmp_path / "missing")
    with pytest.warns(RuntimeWarning, match="ignoring the entry"):
        st = make(scale)
    assert st.build_info["module_source"] == "build"
    check(st, scale)
    assert valid_entry(entry)  # replaced, not only rebuilt
    if kind == "symlink to a valid entry":
        assert valid_entry(elsewhere, key)  # the link was removed, never what it points to
    clear_memory_only(cache_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning: the bad entry is gone
        again = make(scale)
    assert again.build_info["module_source"] == "disk"
    check(again, scale)


def test_eviction_and_clear_remove_non_directory_entries(cache_dir):
    key = build_then_forget(cache_dir, fresh_scale())
    stray = cache_dir / ("f" * 64)
    stray.write_bytes(b"x" * 10)
    link = cache_dir / ("e" * 64)
    link.symlink_to(cache_dir / key)
    assert gtscript.cache.clear() == 3
    assert sorted(p.name for p in cache_dir.iterdir()) == []


# ======================================================================= FIFOs never block

FIFO_SCRIPT = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    def shift_defn(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SCALE
        with computation(PARALLEL), interval(...):
            out = SCALE * (inp[1, 0, 0] - inp[0, 0, 0])

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        st = gtscript.stencil(backend="cpu", definition=shift_defn, externals={"SCALE": 1.5})
    inp = np.arange(24.0).reshape(2, 3, 4)
    out = np.zeros((2, 3, 4))
    st(inp, out, origin=(0, 0, 0), domain=(1, 3, 4))
    assert (out[0] == 1.5 * 12.0).all() and (out[1] == 0).all()
    print(st.build_info["module_source"], st.cache_key)
    print("|".join(str(x.message) for x in w))
""")


@pytest.mark.parametrize("name", ["meta.json", "kernel.o", "kernel.ll"])
def test_a_fifo_in_an_entry_never_blocks_the_build(name, cache_dir, tmp_path):
    script = tmp_path / "fifo_script.py"
    script.write_text(FIFO_SCRIPT)

    def run():
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.splitlines()

    source, key = run()[0].split()
    assert source in ("build", "disk")
    entry = cache_dir / key
    (entry / name).unlink()
    os.mkfifo(entry / name, 0o600)
    try:
        lines = run()  # before the fix: open() waited for a writer forever
    except subprocess.TimeoutExpired:  # pragma: no cover - the defect itself
        pytest.fail(f"a FIFO named {name} in a cache entry blocked the build")
    assert lines[0].split() == ["build", key]
    assert "ignoring the entry" in lines[1] and "regular file" in lines[1]
    assert valid_entry(entry) and stat.S_ISREG((entry / name).lstat().st_mode)
    assert run()[0].split() == ["disk", key]


# ======================================================================= the cache directory itself

def test_a_cache_directory_in_a_world_writable_non_sticky_parent_is_refused(tmp_path, monkeypatch):
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o777)  # anyone could swap the cache directory for a link of theirs
    d = parent / "cache"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    with pytest.raises(PermissionError, match="parent directory .* writable by every user and not sticky") as e:
        make(fresh_scale())
    assert str(d) in str(e.value) and "GTSCRIPT_CACHE_DIR" in str(e.value)
    with pytest.raises(PermissionError, match="not sticky"):
        gtscript.cache.info()
    assert list(d.iterdir()) == []  # nothing was written there
    parent.chmod(0o1777)  # sticky, like /tmp: only the owner may rename or remove the directory
    scale = fresh_scale()
    st = make(scale)
    assert st.build_info["module_source"] == "build"
    check(st, scale)
    assert valid_entry(d / st.cache_key)


def test_a_cache_directory_that_is_a_symbolic_link_is_refused(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(link))
    with pytest.raises(PermissionError, match="symbolic link"):
        make(fresh_scale())
    assert list(real.iterdir()) == []


def test_a_missing_cache_directory_is_created_private(tmp_path, monkeypatch):
    d = tmp_path / "a" / "b" / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    scale = fresh_scale()
    st = make(scale)
    check(st, scale)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700 and valid_entry(d / st.cache_key)
    assert not [p for p in d.iterdir() if p.name.startswith(".")]  # no temporary left behind
