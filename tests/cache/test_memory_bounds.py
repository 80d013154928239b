"""The memory a build keeps is returned: the in-memory levels (the decorator's pre-key table
and the core's key -> loaded code table) are bounded by GTSCRIPT_CACHE_MEMORY_ENTRIES, least
recently used first, and a module's JIT code is unloaded (its JITDylib emptied and reused)
when the last stencil using it is gone; `gtscript.cache.clear()` hands the freed memory back.
The growth test is a bounded loop in a fresh process, with a generous threshold."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval
from gtscript.stencil import _memory_cache

ROOT = Path(__file__).resolve().parents[2]

GROWTH_SCRIPT = textwrap.dedent(
    """
    import gc, json, os, sys
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def defn(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import C
        with computation(PARALLEL), interval(...):
            out = a * C + a[1, 0, 0]

    def one(i):
        s = gtscript.stencil("cpu", defn, externals={"C": float(i) + 0.5})
        a = np.ones((4, 4, 3))
        out = np.zeros((4, 4, 3))
        s(a, out, domain=(3, 4, 3))
        assert np.all(out[:3] == float(i) + 1.5)

    warm, measured = int(sys.argv[1]), int(sys.argv[2])
    for i in range(warm):
        one(i)
    gc.collect()
    r0 = rss()
    for i in range(warm, warm + measured):
        one(i)
    gc.collect()
    r1 = rss()
    entries = gtscript.cache.info()["memory_entries"]
    gtscript.cache.clear()
    gc.collect()
    r2 = rss()
    print(json.dumps({"per_build": (r1 - r0) / measured, "after_clear": (r2 - r0) / measured,
                      "memory_entries": entries}))
    """
)


def _growth(tmp_path, limit, warm, measured):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(cache), GTSCRIPT_CACHE_MEMORY_ENTRIES=str(limit),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = tmp_path / "growth.py"
    script.write_text(GROWTH_SCRIPT)
    done = subprocess.run([sys.executable, str(script), str(warm), str(measured)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="RSS is read from /proc")
def test_distinct_builds_do_not_grow_memory_beyond_the_bound(tmp_path):
    # Before: every distinct build kept ~100 KiB for the life of the process (both memory
    # tables held every module, and clear() returned little to the OS).
    result = _growth(tmp_path, limit=8, warm=40, measured=120)
    assert result["memory_entries"] <= 8
    assert result["per_build"] < 40 * 1024, result  # generous: a few KiB of noise per build
    assert result["after_clear"] < 40 * 1024, result


def _defn_with(scale):
    def defn(a: Field[np.float64], out: Field[np.float64]):
        from __externals__ import S

        with computation(PARALLEL), interval(...):
            out = a * S

    return defn


def test_the_memory_levels_keep_the_most_recently_used(monkeypatch, tmp_path):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GTSCRIPT_CACHE_MEMORY_ENTRIES", "3")
    defn = _defn_with(0)
    gtscript.cache.clear()
    made = [gtscript.stencil("cpu", defn, externals={"S": float(i)}) for i in range(3)]
    # a hit makes the first the most recently used: the second is the oldest now
    assert gtscript.stencil("cpu", defn, externals={"S": 0.0}) is made[0]
    fourth = gtscript.stencil("cpu", defn, externals={"S": 3.0})
    assert len(_memory_cache) == 3 and gtscript.cache.info()["memory_entries"] == 3
    assert gtscript.stencil("cpu", defn, externals={"S": 0.0}) is made[0]
    assert gtscript.stencil("cpu", defn, externals={"S": 3.0}) is fourth
    again = gtscript.stencil("cpu", defn, externals={"S": 1.0})
    assert again is not made[1]  # dropped from the pre-key table: lowered again
    # (the core's table has its own order: a pre-key hit does not reach it)
    assert again.build_info["module_source"] in ("memory", "disk")
    assert len(_memory_cache) == 3 and gtscript.cache.info()["memory_entries"] <= 3
    # stencils dropped from the tables keep working: they hold their own code
    a = np.arange(24.0).reshape(2, 3, 4)
    for i, stencil in enumerate([*made, fourth, again]):
        out = np.zeros_like(a)
        stencil(a, out)
        np.testing.assert_array_equal(out, a * [0.0, 1.0, 2.0, 3.0, 1.0][i])
    gtscript.cache.clear()


def test_a_zero_bound_keeps_nothing_in_memory(monkeypatch, tmp_path):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GTSCRIPT_CACHE_MEMORY_ENTRIES", "0")
    defn = _defn_with(0)
    first = gtscript.stencil("cpu", defn, externals={"S": 5.0})
    second = gtscript.stencil("cpu", defn, externals={"S": 5.0})
    assert second is not first and second.build_info["module_source"] == "disk"
    assert gtscript.cache.info()["memory_entries"] == 0 and len(_memory_cache) == 0
    a = np.ones((2, 2, 2))
    out = np.zeros_like(a)
    first(a, out)
    np.testing.assert_array_equal(out, 5.0 * a)
