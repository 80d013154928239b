"""A failed run-time check ends the call at once, on every backend: a K level computed from
values the stencil writes that leaves the allowed levels inside a `while` loop (GT4Py's own
`test_variable_offsets_and_while_loop` stencil on realistic pressure data, a search loop
without a bound, a write at a level the loop moves), in plain code, and with several threads
busy in long loops; the checks the call makes before running (data indices, interval bounds
from fields) inside `while` loops too. Each call raises the documented error well under a
second and leaves every array as it was (the call is undone), views' margins included.

A check that did not stop the kernel made the cpu backend loop forever (the bad read gave a
value that never ended the loop), so the cases run in a subprocess per backend with a
timeout: a hang fails the test instead of holding the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cuda_emulation.runner import require_compiler

TESTS = Path(__file__).resolve().parents[1]  # tests/: conftest.py and cuda_emulation

SCRIPT = textwrap.dedent('''
    import json, sys, time
    import numpy as np
    import gtscript
    from gtscript import BACKWARD, FORWARD, IJ, PARALLEL, Field, computation, interval
    from conftest import FieldMaker
    from cuda_emulation.runner import emulate

    backend = sys.argv[1]
    fm = FieldMaker(np.random.default_rng(7))


    def build(definition):
        stencil = gtscript.stencil(backend, definition)
        return emulate(stencil) if backend == "cuda" else stencil


    def remap(pe1: Field[np.float64], pe2: Field[np.float64], qin: Field[np.float64],
              qout: Field[np.float64], lev: Field[IJ, np.int64]):
        # GT4Py 1.1.12's test_variable_offsets_and_while_loop
        with computation(FORWARD), interval(0, -1):
            if pe2[0, 0, 1] <= pe1[0, 0, lev]:
                qout = qin[0, 0, 1]
            else:
                qsum = pe1[0, 0, lev + 1] - pe2[0, 0, lev]
                while pe1[0, 0, lev + 1] < pe2[0, 0, 1]:
                    qsum += qin[0, 0, lev] / (pe2[0, 0, 1] - pe1[0, 0, lev])
                    lev = lev + 1
                qout = qsum / (pe2[0, 0, 1] - pe2)


    def search(p: Field[np.float64], target: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            kk = 0
            while p.at(K=kk) < target:  # no bound: only the check ends a search past the top
                kk = kk + 1
            out = p.at(K=kk)


    def fill(a: Field[np.float64], out: Field[np.float64], big: float):
        with computation(FORWARD), interval(...):
            lev = 0
            x = 0.0
            while x < big:  # ends after `big` levels: the write leaves the domain before
                out[0, 0, lev] = x + a
                x = x + 1.0
                lev = lev + 1


    def plain(a: Field[np.float64], shift: Field[np.int64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            lev = shift
            out = a[0, 0, lev] + 1.0


    def busy(a: Field[np.float64], shift: Field[np.int64], work: Field[np.float64],
             out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            lev = shift
            y = a[0, 0, lev]  # fails at one point, before any loop there
            x = 0.0
            while x < work:  # long everywhere else
                x = x + 1.0
            out = x + y


    def late(a: Field[np.float64], shift: Field[np.int64], work: Field[np.float64],
             out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            lev = shift
            x = 0.0
            while x < work:
                x = x + 1.0
            out = x + a[0, 0, lev]  # fails at one point, after its loop


    def component(vec: Field[(np.float64, (3,))], sel: Field[np.int64], stop: Field[np.float64],
                  out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            x = 0.0
            while x < stop:
                x = x + vec[0, 0, 0][sel]


    def bounded(a: Field[np.float64], top: Field[IJ, np.int64], stop: Field[np.float64],
                out: Field[np.float64]):
        with computation(PARALLEL), interval(0, top):
            x = 0.0
            while x < stop:
                x = x + a
            out = x


    def pressure(shape, surface):
        """Hybrid pressure interfaces from 300 Pa to the surface pressure of each column."""
        eta = np.linspace(0.0, 1.0, shape[2]) ** 1.5
        return 300.0 + (surface[:, :, None] - 300.0) * eta


    def attempt(stencil, arrays, scalars, watched):
        snaps = fm.snapshot(*watched)
        t0 = time.perf_counter()
        try:
            stencil(*arrays, **scalars)
            r = {"error": None}
        except Exception as err:
            r = {"error": type(err).__name__, "message": str(err)}
        r["seconds"] = time.perf_counter() - t0
        try:
            fm.assert_unchanged(snaps)
            for w in watched:
                fm.assert_view_padding_untouched(w)
            r["unchanged"] = True
        except AssertionError as err:
            r["unchanged"] = str(err)
        return r


    def case_gt4py_while():
        st = build(remap)
        shape = (3, 4, 10)
        ps = fm.rng.uniform(9.8e4, 1.02e5, shape[:2])
        pe1 = fm.as_layout(pressure(shape, ps), "sliced")
        qin = fm.random(shape)
        qout = fm.sentinel(shape, layout="sliced")
        lev = np.zeros(shape[:2], np.int64)
        st(pe1, pe1.copy(), qin, qout, lev)  # the same grid: built and run once
        qout[...] = fm.SENTINEL
        lev[...] = 0
        pe2 = fm.as_layout(pressure(shape, ps * 1.01), "sliced")  # a deeper surface
        return attempt(st, (pe1, pe2, qin, qout, lev), {}, [pe1, pe2, qin, qout, lev])


    def case_search_while():
        st = build(search)
        shape = (3, 4, 6)
        p = np.cumsum(fm.rng.uniform(0.5, 1.0, shape), axis=2)
        out = fm.sentinel(shape, layout="sliced")
        st(p, p[:, :, :1] + 0.0 * p, out)
        out[...] = fm.SENTINEL
        target = p[:, :, -1:] + 0.0 * p
        target[1, 2, 3] += 1.0  # one point searches past the top
        return attempt(st, (p, target, out), {}, [p, target, out])


    def case_write_while():
        st = build(fill)
        shape = (3, 4, 6)
        a = fm.random(shape)
        out = fm.sentinel(shape, layout="sliced")
        st(a, out, big=1.0)
        out[...] = fm.SENTINEL
        return attempt(st, (a, out), {"big": 1e12}, [a, out])


    def case_plain():
        st = build(plain)
        shape = (3, 4, 6)
        a = fm.random(shape, layout="sliced")
        out = fm.sentinel(shape, layout="sliced")
        shift = np.zeros(shape, np.int64)
        st(a, shift, out)
        out[...] = fm.SENTINEL
        shift[2, 1, 4] = 3  # level 7 of 6
        return attempt(st, (a, shift, out), {}, [a, shift, out])


    def case_busy():
        st = build(busy)
        shape = (4, 4, 2)
        a = fm.random(shape)
        out = fm.sentinel(shape, layout="sliced")
        shift = np.zeros(shape, np.int64)
        work = np.zeros(shape)
        st(a, shift, work, out)
        out[...] = fm.SENTINEL
        shift[0, 0, 0] = -1  # below the first level, at the first point
        work[...] = 3e7  # tenths of a second a point: seconds for the domain if the loops ran on
        return attempt(st, (a, shift, work, out), {}, [a, shift, work, out])


    def case_busy_threads():
        # tiles of one column on two threads (a domain large enough for threads): the first
        # tile's check fails after a loop of a tenth of a second, while the second tile's
        # loop would run for hours
        st = build(late)
        shape = (64, 64, 8)
        a = fm.random(shape)
        out = fm.sentinel(shape, layout="sliced")
        shift = np.zeros(shape, np.int64)
        work = np.zeros(shape)
        st(a, shift, work, out)
        out[...] = fm.SENTINEL
        shift[0, 0, 0] = 8
        work[0, 0, 0] = 3e7
        work[0, 1, :] = 1e15
        return attempt(st, (a, shift, work, out), {}, [a, shift, work, out])


    def case_data_index_while():
        st = build(component)
        shape = (3, 4, 5)
        vec = fm.random(shape + (3,), low=0.5)
        sel = np.zeros(shape, np.int64)
        stop = np.ones(shape)
        out = fm.sentinel(shape, layout="sliced")
        st(vec, sel, stop, out)
        out[...] = fm.SENTINEL
        sel[1, 1, 1] = 3
        stop[...] = np.inf  # the loops would never end: nothing may run
        return attempt(st, (vec, sel, stop, out), {}, [vec, sel, stop, out])


    def case_bound_while():
        st = build(bounded)
        shape = (3, 4, 5)
        a = fm.random(shape, low=0.5)
        top = np.full(shape[:2], 2, np.int64)
        stop = np.ones(shape)
        out = fm.sentinel(shape, layout="sliced")
        st(a, top, stop, out)
        out[...] = fm.SENTINEL
        top[2, 3] = 6  # past the domain's 5 levels
        stop[...] = np.inf
        return attempt(st, (a, top, stop, out), {}, [a, top, stop, out])


    for name in sys.argv[2:]:
        print(json.dumps({"case": name, **globals()["case_" + name]()}), flush=True)
''')

CASES = ["gt4py_while", "search_while", "write_while", "plain", "busy", "data_index_while",
         "bound_while"]


def run_cases(tmp_path, backend, cases, env=None, timeout=90):
    """The cases' results by name; the cases a hang left unfinished are missing."""
    script = tmp_path / "cases.py"
    script.write_text(SCRIPT)
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, str(script), backend, *cases], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": path, **(env or {})})
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    results = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["case"]] = r
    return results, err


def check(results, err, cases, backend):
    for name in cases:
        assert name in results, f"{backend}: case {name!r} did not return (hung?)\n{err[-3000:]}"
        r = results[name]
        if name == "data_index_while":
            assert r["error"] == "IndexError" and "'sel'" in r["message"], r
        elif name == "bound_while":
            assert r["error"] == "ValueError" and "'top'" in r["message"], r
        else:
            assert r["error"] == "ValueError" and "restored" in r["message"], r
        assert r["unchanged"] is True, r
        assert r["seconds"] < (2.5 if name == "busy_threads" else 1.0), r


@pytest.mark.parametrize("backend", ["cpu", "numpy", "cuda"])
def test_a_failed_check_stops_the_call(tmp_path, backend):
    if backend == "cuda":
        require_compiler()
    results, err = run_cases(tmp_path, backend, CASES)
    check(results, err, CASES, backend)


@pytest.mark.parametrize("env", [
    {"GTSCRIPT_TILE_SIZE": "1x1", "GTSCRIPT_NUM_THREADS": "2"},  # every thread in a loop
    {"GTSCRIPT_NUM_THREADS": "1"},
], ids=["tiles", "one-thread"])
def test_other_threads_stop_at_their_next_look(tmp_path, env):
    cases = ["busy", "gt4py_while", "search_while"]
    if env.get("GTSCRIPT_NUM_THREADS") == "2":
        cases.append("busy_threads")
    results, err = run_cases(tmp_path, "cpu", cases, env=env)
    check(results, err, cases, "cpu")
