"""Ctrl-C during a long call (docs/troubleshooting.md): kernels run with the GIL released, the
tile loops stop at the next tile once SIGINT arrives, and the call raises KeyboardInterrupt (or
finishes, when the program's SIGINT handler does not raise).

Each case runs in a subprocess that receives a real SIGINT. The kernel is a `while` loop with a
known result (counting from 0 to N by 1.0 ends exactly at N), cut into one-column tiles, so a
point is either untouched or exactly N, and the margins of the output's buffer must keep their
sentinel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = textwrap.dedent("""
    import json, signal, sys, time
    # SIGINT as in a program started from a terminal: a test run from a background job (a CI
    # runner, nohup) hands its children SIGINT ignored, and Python then installs no handler
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    def spin(a: Field[np.float64], out: Field[np.float64], n: float):
        with computation(PARALLEL), interval(...):
            x = a
            while x < n:
                x = x + 1.0
            out = x

    mode, n, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    handled = []
    if mode == "handler":
        # what the handler sees: points not computed yet, when it runs during the call
        signal.signal(signal.SIGINT, lambda *args: handled.append(int((out == -1.0).sum())))
    st = gtscript.stencil(backend="cpu", definition=spin)
    a = np.zeros((size, size, 1))
    buf = np.full((size + 2, size + 2, 3), -5.0)  # sentinel margins around the domain
    out = buf[1:-1, 1:-1, 1:2]
    st(a, out, n=2.0)  # built and warmed up before the parent is told to interrupt
    out[...] = -1.0
    result = {}
    print("calling", flush=True)
    t0 = time.time()
    try:
        st(a, out, n=n)
        result["finished"] = True
    except KeyboardInterrupt:
        result["interrupted"] = True
    t1 = time.time()
    result["seconds"] = t1 - t0
    result["handled"] = len(handled)
    result["handled_during_the_call"] = bool(handled) and handled[0] > 0
    result["done"] = int((out == n).sum())
    result["untouched"] = int((out == -1.0).sum())
    inner = np.zeros(buf.shape, bool)
    inner[1:-1, 1:-1, 1:2] = True
    result["margins_intact"] = bool((buf[~inner] == -5.0).all())
    st(a, out, n=3.0)  # the stencil works normally after an interrupted call
    result["after"] = bool((out == 3.0).all() and (buf[~inner] == -5.0).all())
    print(json.dumps(result), flush=True)
""")


def run_and_interrupt(tmp_path, mode, n, size, wait=1.0, timeout=60):
    script = tmp_path / "spin.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "GTSCRIPT_TILE_SIZE": "1x1", "GTSCRIPT_NUM_THREADS": "2"}
    proc = subprocess.Popen([sys.executable, str(script), mode, repr(n), str(size)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "calling", proc.stderr.read()
        time.sleep(wait)
        sent = time.time()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the call did not stop within {timeout} s of SIGINT")
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), time.time() - sent


def test_ctrl_c_interrupts_a_long_call_with_keyboard_interrupt(tmp_path):
    # one column takes tens of milliseconds; all of them would take minutes
    r, after_signal = run_and_interrupt(tmp_path, "default", 1e7, 48, timeout=30)
    assert r.get("interrupted") and not r.get("finished"), r
    assert after_signal < 20, after_signal
    assert r["done"] > 0 and r["untouched"] > 0, r  # stopped part-way, between tiles
    assert r["done"] + r["untouched"] == 48 * 48, r  # every point is untouched or complete
    assert r["margins_intact"] and r["after"], r


def test_a_sigint_handler_that_does_not_raise_lets_the_call_finish(tmp_path):
    r, _ = run_and_interrupt(tmp_path, "handler", 2e6, 32, wait=0.3, timeout=120)
    assert r.get("finished") and not r.get("interrupted"), r
    assert r["handled"] == 1 and r["handled_during_the_call"], r  # not only once it ended
    assert r["done"] == 32 * 32 and r["untouched"] == 0, r  # the remaining tiles ran
    assert r["margins_intact"] and r["after"], r
