"""Builds that must not crash the interpreter (docs/troubleshooting.md).

LLVM's analyses recurse over a function's loops: a definition of many computation blocks used
to overflow the stack of whichever thread decorated it (the main thread's 8 MiB at about 2,000
blocks, a Python thread's smaller stack much sooner) and kill the process with SIGSEGV. The cpu
build now runs on a thread of its own with a stack sized for it, so the caller's stack no longer
matters. The test builds in a subprocess (a regression must fail the test, not the suite) from a
Python thread with a 256 KiB stack, where 50 blocks were already enough to crash.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np

BLOCKS = 120

SCRIPT = textwrap.dedent("""
    import json, linecache, sys, threading
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    n, backend = int(sys.argv[1]), sys.argv[2]
    lines = ["def many(a: Field[np.float64], b: Field[np.float64]):"]
    for i in range(n):
        lines += ["    with computation(PARALLEL), interval(...):",
                  f"        b = b + a * {i + 1}.0"]
    src = "\\n".join(lines) + "\\n"
    linecache.cache["<many>"] = (len(src), None, src.splitlines(True), "<many>")
    ns = {"np": np, "Field": Field, "computation": computation, "interval": interval,
          "PARALLEL": PARALLEL}
    exec(compile(src, "<many>", "exec"), ns)

    a = np.random.default_rng(5).uniform(size=(5, 4, 3))
    b = np.full((7, 6, 5), -9.0)
    result = {}

    def work():
        try:
            st = gtscript.stencil(backend=backend, definition=ns["many"], rebuild=True)
            st(a, b[1:-1, 1:-1, 1:-1], origin=(0, 0, 0), domain=a.shape)
            result["b"] = b.tolist()
        except BaseException as e:
            result["error"] = repr(e)

    threading.stack_size(256 * 1024)  # small, like an embedding application's threads
    t = threading.Thread(target=work)
    t.start()
    t.join()
    print(json.dumps(result))
""")


def build_in_subprocess(tmp_path, backend):
    script = tmp_path / "many_blocks.py"
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script), str(BLOCKS), backend], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, f"the build killed the process (status {r.returncode}): {r.stderr[-2000:]}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "error" not in out, out["error"]
    return np.array(out["b"])


def test_many_computation_blocks_build_from_a_thread_with_a_small_stack(tmp_path):
    cpu = build_in_subprocess(tmp_path, "cpu")
    reference = build_in_subprocess(tmp_path, "numpy")
    a = np.random.default_rng(5).uniform(size=(5, 4, 3))
    expect = np.full((7, 6, 5), -9.0)
    inner = expect[1:-1, 1:-1, 1:-1]
    for i in range(BLOCKS):  # the blocks in order, as written
        inner[...] = inner + a * float(i + 1)
    np.testing.assert_array_equal(reference, expect)
    np.testing.assert_allclose(cpu, expect, rtol=1e-13, atol=0)
    assert (cpu[0] == -9.0).all() and (cpu[-1] == -9.0).all()  # the margins are untouched
    assert (cpu[:, 0] == -9.0).all() and (cpu[:, :, -1] == -9.0).all()
