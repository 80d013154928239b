"""What the disk cache's tests share: a one-line stencil built with an external no other build
in the process used (a fresh cache key), its check against NumPy, a private cache directory
for each test, and emptying the memory levels alone."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval

SHAPE = (6, 5, 3)
_scales = itertools.count(1)


def fresh_scale() -> float:
    """An external value no other stencil in this process was built with: a fresh key."""
    return 2.0 + next(_scales) / 512.0 + (os.getpid() % 991) / 1e6


def shift_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        out = SCALE * (inp[1, 0, 0] - inp[0, 0, 0])


def make(scale, backend="cpu"):
    return gtscript.stencil(backend=backend, definition=shift_defn, externals={"SCALE": scale})


def check(st, scale):
    inp = np.random.default_rng(3).uniform(size=SHAPE)
    out = np.full(SHAPE, -7.0)
    st(inp, out, origin=(0, 0, 0), domain=(SHAPE[0] - 1, SHAPE[1], SHAPE[2]))
    expect = np.full(SHAPE, -7.0)
    expect[:-1] = scale * (inp[1:] - inp[:-1])
    np.testing.assert_array_equal(out, expect)


def clear_memory_only(cache_dir):
    """Empties the memory levels and keeps the disk as it is (clear() empties both)."""
    held = cache_dir.with_name("held")
    os.rename(cache_dir, held)
    gtscript.cache.clear()
    os.rename(held, cache_dir)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(d))
    monkeypatch.delenv("GTSCRIPT_CACHE_MAX_BYTES", raising=False)
    return d
