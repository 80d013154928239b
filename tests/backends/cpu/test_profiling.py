"""Profilers and debuggers see the JIT's kernels (docs/profiling.md).

- GTSCRIPT_PERF_MAP=1: every loaded kernel's functions are appended to /tmp/perf-<pid>.map,
  named ``gtscript:<stencil>:<function>``, at addresses inside the process's executable
  memory; ``perf report`` then names the samples in JIT code.
- GTSCRIPT_GDB_JIT=1: the loaded objects are registered through the GDB JIT interface, so a
  breakpoint on the kernel is hit.
Both off by default: no map is written, no breakpoint resolves. Each case runs in a child
process (the settings are read once per process) with a private cache.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    import gtscript
    from gtscript import PARALLEL, Field, computation, interval

    @gtscript.stencil(backend="cpu", rebuild=sys.argv[1] == "build")
    def east_minus_west(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] - inp[-1, 0, 0]

    a = np.arange(6 * 5 * 3, dtype=np.float64).reshape(6, 5, 3)
    b = np.zeros_like(a)
    east_minus_west(a, b)
    assert (b[1:-1] == 2 * 15).all()      # the kernel ran, and ran right
    executable = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            lo_hi, perms = line.split()[:2]
            if "x" in perms:
                executable.append([int(x, 16) for x in lo_hi.split("-")])
    print(json.dumps({"pid": os.getpid(), "executable": executable,
                      "source": east_minus_west.build_info["module_source"]}))
''')


def run_child(tmp_path, env_extra, mode="build"):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache"),
           "GTSCRIPT_PERF_MAP": "", "GTSCRIPT_GDB_JIT": "", **env_extra}
    (tmp_path / "cache").mkdir(mode=0o700, exist_ok=True)
    proc = subprocess.run([sys.executable, str(script), mode], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def take_map(pid):
    path = Path(f"/tmp/perf-{pid}.map")
    if not path.exists():
        return None
    try:
        return path.read_text()
    finally:
        path.unlink()


LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (\S+)$")


@pytest.mark.parametrize("mode", ["build", "disk"])
def test_perf_map_names_the_kernels_functions(tmp_path, mode):
    if mode == "disk":
        run_child(tmp_path, {}, "build")            # fills the disk cache
    child, stderr = run_child(tmp_path, {"GTSCRIPT_PERF_MAP": "1"}, mode)
    assert child["source"] == ("build" if mode == "build" else "disk")
    text = take_map(child["pid"])
    assert text is not None, "no perf map written"
    entries = {}
    for line in text.splitlines():
        match = LINE.match(line)
        assert match, f"not a perf map line: {line!r}"
        entries[match.group(3)] = (int(match.group(1), 16), int(match.group(2), 16))
    assert {"gtscript:east_minus_west:gt_kernel", "gtscript:east_minus_west:gt_part"} <= set(entries)
    for name, (addr, size) in entries.items():
        assert size > 0
        assert any(lo <= addr and addr + size <= hi for lo, hi in child["executable"]), (
            f"{name} at {addr:#x}+{size:#x} is not in executable memory")
    spans = sorted(entries.values())
    assert all(a + s <= b for (a, s), (b, _) in zip(spans, spans[1:])), "functions overlap"
    assert stderr == ""


def test_no_perf_map_by_default(tmp_path):
    child, _ = run_child(tmp_path, {})
    assert take_map(child["pid"]) is None


def test_an_invalid_setting_is_said(tmp_path):
    child, stderr = run_child(tmp_path, {"GTSCRIPT_PERF_MAP": "yes", "GTSCRIPT_GDB_JIT": "on"})
    assert take_map(child["pid"]) is None
    assert "GTSCRIPT_PERF_MAP=yes is neither 0 nor 1" in stderr
    assert "GTSCRIPT_GDB_JIT=on is neither 0 nor 1" in stderr


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_perf_report_names_the_stencil(tmp_path):
    script = tmp_path / "busy.py"
    script.write_text(textwrap.dedent('''
        import time
        import numpy as np
        import gtscript
        from gtscript import PARALLEL, Field, computation, interval

        @gtscript.stencil(backend="cpu")
        def busy_diffusion(inp: Field[np.float64], out: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                out = inp + 0.1 * (inp[1, 0, 0] + inp[-1, 0, 0] + inp[0, 1, 0]
                                   + inp[0, -1, 0] - 4.0 * inp)

        a = np.random.default_rng(0).random((96, 96, 32))
        b = np.zeros_like(a)
        start = time.perf_counter()
        while time.perf_counter() - start < 1.0:
            busy_diffusion(a, b)
    '''))
    (tmp_path / "cache").mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache"),
           "GTSCRIPT_PERF_MAP": "1", "GTSCRIPT_NUM_THREADS": "1"}
    data = tmp_path / "perf.data"
    record = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", str(data),
                             sys.executable, str(script)],
                            env=env, capture_output=True, text=True, timeout=180)
    maps = [p for p in Path("/tmp").glob("perf-*.map") if "busy_diffusion" in p.read_text()]
    try:
        assert record.returncode == 0, record.stderr
        report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "sym"],
                                capture_output=True, text=True, timeout=180)
        assert report.returncode == 0, report.stderr
        assert "gtscript:busy_diffusion:gt_part" in report.stdout, report.stdout[:3000]
    finally:
        for p in maps:
            p.unlink()


GDB_ARGS = ["gdb", "-q", "-batch", "-nx", "-ex", "set breakpoint pending on",
            "-ex", "break gt_kernel", "-ex", "run", "-ex", "bt 2", "-ex", "info symbol $pc",
            "-ex", "kill"]


@pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed")
@pytest.mark.parametrize("enabled", [True, False], ids=["GTSCRIPT_GDB_JIT=1", "default"])
def test_gdb_stops_in_the_kernel(tmp_path, enabled):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    (tmp_path / "cache").mkdir(mode=0o700)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GTSCRIPT_CACHE_DIR": str(tmp_path / "cache"),
           "GTSCRIPT_GDB_JIT": "1" if enabled else "0"}
    proc = subprocess.run([*GDB_ARGS, "--args", sys.executable, str(script), "build"], env=env,
                          capture_output=True, text=True, timeout=180, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    if enabled:
        assert re.search(r"hit Breakpoint 1, 0x[0-9a-f]+ in gt_kernel \(\)", out), out[-3000:]
        assert "gt_kernel in section .text" in out
        assert "run_tiles" in out  # called from the core's tile loop: a real backtrace
    else:
        assert "hit Breakpoint" not in out and "exited normally" in out, out[-3000:]
