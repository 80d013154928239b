"""Concurrency: processes and threads building and calling at once.

- 8 processes build stencils into ONE disk cache directory, each round one stencil all of
  them build (identical keys: racing stores) and one only it builds (distinct keys), with the
  memory level off (every decoration goes to the disk level) and a size limit that makes
  every store evict, while a ninth process empties the cache in a loop. Every process must
  finish, every result must be right (a damaged or foreign entry loaded would give a wrong
  one), and nothing but documented outcomes may be reported.
- 8 threads of one process build (distinct and identical definitions) and call (a shared
  stencil object, their own ones) at once; every result is checked.

test_cache.py covers 8 processes building one identical stencil without eviction; this file
adds distinct keys, eviction and clearing under load, and threads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, interval

ROUNDS = int(os.environ.get("GTSCRIPT_FUZZ_ROUNDS", "5"))

WORKER = textwrap.dedent("""
    import json, os, sys, time, warnings
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    wid, rounds, go = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    open(go + f".ready{wid}", "w").close()
    deadline = time.time() + 120
    while not os.path.exists(go):
        if time.time() > deadline:
            sys.exit("no go signal")
        time.sleep(0.002)

    def diffuse(inp: Field[np.float64], out: Field[np.float64]):
        from __externals__ import SCALE
        with computation(PARALLEL), interval(...):
            tmp = inp[1, 0, 0] - inp[0, 0, 0]
            out = SCALE * (tmp - tmp[-1, 0, 0]) + inp[0, 1, 0]

    rng = np.random.default_rng(wid)
    report = {"sources": [], "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for r in range(rounds):
            # shared: every worker builds this key in round r; own: only this worker does
            for scale in (0.25 * (r % 3 + 1), 100.0 + wid + 0.001 * r):
                st = gtscript.stencil("cpu", diffuse, externals={"SCALE": scale})
                inp = rng.uniform(-1, 1, (7, 6, 3))
                if r % 2:  # the Fortran-order kernel: a second, derived key
                    inp = np.asfortranarray(inp)
                out = np.full_like(inp, -5.0)
                st(inp, out, origin=(1, 0, 0), domain=(5, 5, 3))
                tmp = inp[1:, :-1] - inp[:-1, :-1]
                want = scale * (tmp[1:6] - tmp[0:5]) + inp[1:6, 1:6]
                if not np.array_equal(out[1:6, :5], want) or (out[0] != -5.0).any() \\
                        or (out[6] != -5.0).any() or (out[:, 5] != -5.0).any():
                    sys.exit(f"wrong result: worker {wid} round {r} scale {scale} "
                             f"({st.build_info['module_source']})")
                report["sources"].append(st.build_info["module_source"])
    report["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    report["info"] = gtscript.cache.info()
    print(json.dumps(report))
""")

EVICTOR = textwrap.dedent("""
    import os, sys, time
    import gtscript
    stop = sys.argv[1]
    cleared = 0
    while not os.path.exists(stop):
        cleared += gtscript.cache.clear()
        gtscript.cache.info()
        time.sleep(0.03)  # entries live a moment: the workers also hit each other's
    print(cleared)
""")


def test_eight_processes_build_into_one_cache_while_another_evicts(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, GTSCRIPT_CACHE_DIR=str(cache), GTSCRIPT_CACHE_MEMORY_ENTRIES="0",
               GTSCRIPT_CACHE_MAX_BYTES=str(200_000))  # a few entries: every store evicts
    (tmp_path / "worker.py").write_text(WORKER)
    (tmp_path / "evictor.py").write_text(EVICTOR)
    go, stop = tmp_path / "go", tmp_path / "stop"
    workers = [subprocess.Popen([sys.executable, str(tmp_path / "worker.py"), str(i), str(ROUNDS),
                                 str(go)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env) for i in range(8)]
    evictor = subprocess.Popen([sys.executable, str(tmp_path / "evictor.py"), str(stop)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while len(list(tmp_path.glob("go.ready*"))) < 8 and time.time() < deadline:
        time.sleep(0.01)
    go.touch()
    reports = []
    try:
        for p in workers:
            stdout, stderr = p.communicate(timeout=300)
            assert p.returncode == 0, stderr[-3000:]
            reports.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        stop.touch()
        stdout, stderr = evictor.communicate(timeout=120)
        for p in workers:
            if p.poll() is None:
                p.kill()
    assert evictor.returncode == 0, stderr[-3000:]
    assert int(stdout.strip()) > 0, "the evictor never removed an entry: no contention tested"
    print("evictor removed", stdout.strip(), "entries; sources", [r["sources"].count("disk") for r in reports], [r["info"] for r in reports[:1]])
    for report in reports:
        assert len(report["sources"]) == 2 * ROUNDS
        assert set(report["sources"]) <= {"build", "disk"}, report
        # an entry removed under a reader is rebuilt silently; nothing is corrupt, so there
        # is nothing to warn about
        assert report["warnings"] == [], report["warnings"]
        assert report["info"]["invalid_entries"] == 0, report
    # the shared keys were found on disk at least once: the processes did share the cache
    assert any("disk" in r["sources"] for r in reports), reports
    # what is left is whole: no temporaries or half-removed entries survive a quiet moment
    for entry in cache.iterdir():
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            assert (entry / "meta.json").is_file() and (entry / "kernel.o").is_file(), entry


# ======================================================================= threads

def thread_defn(inp: Field[np.float64], out: Field[np.float64]):
    from __externals__ import SCALE

    with computation(PARALLEL), interval(...):
        out = SCALE * (inp[1, 0, 0] + inp[-1, 0, 0]) - inp[0, 0, 1]


def test_eight_threads_build_and_call_at_once():
    shared = gtscript.stencil("cpu", thread_defn, externals={"SCALE": 0.5})
    barrier = threading.Barrier(8)
    errors, done = [], []

    def work(tid):
        try:
            rng = np.random.default_rng(tid)
            barrier.wait(timeout=60)
            for r in range(6):
                # a definition every thread builds, one only this thread builds, and calls of
                # the stencil object every thread shares, all interleaved
                for scale in (1.0 + r % 2, 10.0 + tid + 0.01 * r, 0.5):
                    st = shared if scale == 0.5 else gtscript.stencil(
                        "cpu", thread_defn, externals={"SCALE": scale})
                    inp = rng.uniform(-1, 1, (9, 7, 5))
                    if (tid + r) % 3 == 0:
                        inp = np.asfortranarray(inp)
                    out = np.full(inp.shape, 3.0)
                    st(inp, out, origin=(1, 0, 0), domain=(7, 7, 4))
                    want = np.full(inp.shape, 3.0)
                    want[1:8, 0:7, 0:4] = scale * (inp[2:9, 0:7, 0:4] + inp[0:7, 0:7, 0:4]) \
                        - inp[1:8, 0:7, 1:5]
                    if not np.array_equal(out, want):
                        errors.append(f"thread {tid} round {r} scale {scale}: wrong result")
                        return
            done.append(tid)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(f"thread {tid}: {error!r}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    assert not errors, errors
    assert sorted(done) == list(range(8))


@pytest.mark.parametrize("backend", ["cpu", "numpy"])
def test_threads_calling_one_stencil_on_shared_inputs_each_into_its_own_output(backend):
    """The same input arrays read by 8 threads at once through one stencil object, each
    writing its own output: reads are never disturbed by the other calls."""
    st = gtscript.stencil(backend, thread_defn, externals={"SCALE": 2.0})
    inp = np.random.default_rng(3).uniform(-1, 1, (20, 12, 9))
    before = inp.copy()
    want = np.zeros(inp.shape)
    want[1:-1, :, :-1] = 2.0 * (inp[2:, :, :-1] + inp[:-2, :, :-1]) - inp[1:-1, :, 1:]
    outs = [np.zeros(inp.shape) for _ in range(8)]
    barrier = threading.Barrier(8)
    errors = []

    def work(i):
        try:
            barrier.wait(timeout=60)
            for _ in range(20):
                st(inp, outs[i], origin=(1, 0, 0), domain=(18, 12, 8))
        except Exception as error:  # noqa: BLE001
            errors.append(repr(error))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert np.array_equal(inp, before)
    for out in outs:
        np.testing.assert_array_equal(out, want)
