"""The command line, ``python -m gtscript cache|show|bench``."""

import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gtscript import cli
from gtscript.stencil import BACKENDS

DEFS = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import Field, PARALLEL, computation, interval

    @gtscript.function
    def twice(f):
        return 2.0 * f

    @gtscript.stencil(backend="numpy")
    def lap(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            out = inp[1, 0, 0] + inp[-1, 0, 0] - 2.0 * inp

    def scale_defn(a: Field[np.float32], b: Field[np.float32], w: float):
        with computation(PARALLEL), interval(...):
            b = w * twice(a[0, 1, 0])

    NOT_A_STENCIL = 3

    if __name__ == "__main__":
        raise SystemExit("the file's main block must not run")
''')

BAD = textwrap.dedent('''
    import numpy as np
    import gtscript
    from gtscript import Field, PARALLEL, computation, interval

    @gtscript.stencil(backend="cpu")
    def broken(inp: Field[np.float64], out: Field[np.float64]):
        with computation(PARALLEL), interval(...):
            for i in range(3):
                out = inp
''')


@pytest.fixture
def defs(tmp_path):
    path = tmp_path / "defs.py"
    path.write_text(DEFS)
    return path


def run_cli(capsys, *argv):
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


# ===================================================================================== show

def test_show_summary_of_a_stencil_object(defs, capsys):
    status, out, err = run_cli(capsys, "show", f"{defs}:lap")
    assert status == 0, err
    assert out.startswith("lap(inp: Field[float64], out: Field[float64])")
    assert "backend  numpy" in out
    assert re.search(r"\n  key      [0-9a-f]{64}\n", out)
    assert "halo     ((1, 1), (0, 0), (0, 0))" in out
    assert "inp          in     float64  IJK  extent ((-1, 1), (0, 0), (0, 0))" in out
    assert "computation(PARALLEL)" in out and "inp[-1, 0, 0]" in out   # the IR follows


def test_show_builds_a_plain_definition_on_cpu(defs, capsys):
    status, out, err = run_cli(capsys, "show", f"{defs}:scale_defn")
    assert status == 0, err
    assert "backend  cpu" in out
    assert "halo     ((0, 0), (0, 1), (0, 0))" in out
    assert "b = " in out and "a[0, 1, 0]" in out   # the inlined function's read


def test_show_ir_only(defs, capsys):
    status, out, _ = run_cli(capsys, "show", f"{defs}:lap", "--ir")
    assert status == 0
    assert out.startswith("stencil lap(")
    assert "backend" not in out


def test_show_llvm_rebuilds_a_numpy_stencil_on_cpu(defs, capsys):
    status, out, _ = run_cli(capsys, "show", f"{defs}:lap", "--llvm")
    assert status == 0
    assert "target triple" in out and "define " in out


def test_show_backend_option(defs, capsys):
    status, out, _ = run_cli(capsys, "show", f"{defs}:scale_defn", "--backend", "numpy")
    assert status == 0 and "backend  numpy" in out


def test_show_cuda(defs, capsys):
    status, out, err = run_cli(capsys, "show", f"{defs}:lap", "--cuda")
    if status == 0:   # a build with the cuda backend and NVRTC
        assert "cuda" in BACKENDS and "__global__" in out
    else:
        assert status == 2 and "backend is not available" in err and out == ""


def test_show_finds_the_only_stencil_without_a_name(defs, capsys):
    status, out, _ = run_cli(capsys, "show", defs)
    assert status == 0 and out.startswith("lap(")


@pytest.mark.parametrize("target,words", [
    ("{defs}:nope", "has no 'nope' (stencils in the file: lap)"),
    ("{defs}:twice", "is a @gtscript.function"),
    ("{defs}:NOT_A_STENCIL", "is a int, not a stencil"),
    ("{missing}:lap", "no such file"),
])
def test_show_mistakes_are_explained(defs, tmp_path, capsys, target, words):
    target = target.format(defs=defs, missing=tmp_path / "missing.py")
    status, out, err = run_cli(capsys, "show", target)
    assert status == 2 and out == ""
    assert err.startswith("gtscript: ") and words in err


def test_show_unknown_backend(defs, capsys):
    status, _, err = run_cli(capsys, "show", f"{defs}:lap", "--backend", "fpga")
    assert status == 2 and "fpga backend is not available" in err


def test_show_build_error_points_at_the_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(BAD)
    status, out, err = run_cli(capsys, "show", f"{path}:broken")
    assert status == 1 and out == ""
    line = BAD.splitlines().index("        for i in range(3):") + 1
    assert f'File "{path}", line {line}' in err
    assert "for i in range(3):" in err and "Traceback" not in err


def test_flags_are_exclusive_and_unknown_arguments_refused(defs, capsys):
    with pytest.raises(SystemExit):
        cli.main(["show", f"{defs}:lap", "--ir", "--llvm"])
    with pytest.raises(SystemExit):
        cli.main(["show", f"{defs}:lap", "--bogus"])
    with pytest.raises(SystemExit):
        cli.main([])
    capsys.readouterr()


def test_python_dash_m_entry_point(defs):
    """The real command, in a fresh process; the file's main block does not run."""
    proc = subprocess.run([sys.executable, "-m", "gtscript", "show", f"{defs}:lap", "--ir"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("stencil lap(")


# ==================================================================================== cache

HAS_CACHE = importlib.util.find_spec("gtscript.cache") is not None


def test_cache_commands(tmp_path, monkeypatch, capsys):
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(cache_dir))
    if not HAS_CACHE:
        for action in ("info", "clear", "path"):
            status, _, err = run_cli(capsys, "cache", action)
            assert status == 2 and "no on-disk cache" in err
        return
    from gtscript.stencil import stencil

    status, out, err = run_cli(capsys, "cache", "path")
    assert status == 0, err
    assert out == f"{cache_dir}\n"

    path = tmp_path / "defs.py"
    path.write_text(DEFS)
    stencil("cpu", cli._load_file(path).scale_defn, rebuild=True)   # one entry on disk
    status, out, err = run_cli(capsys, "cache", "info")
    assert status == 0, err
    fields = dict(line.split(None, 1) for line in out.splitlines())
    assert fields["path"] == str(cache_dir)
    assert int(fields["entries"]) >= 1
    assert fields["bytes"].endswith(("B", "KiB", "MiB"))
    assert "hits" not in fields              # per-process counters mean nothing here

    status, out, err = run_cli(capsys, "cache", "clear")
    assert status == 0, err
    assert out.startswith(f"cleared {cache_dir}: ") and "entries removed" in out
    status, out, _ = run_cli(capsys, "cache", "info")
    assert dict(line.split(None, 1) for line in out.splitlines())["entries"] == "0"


def test_cache_needs_an_action(capsys):
    with pytest.raises(SystemExit):
        cli.main(["cache", "drop"])
    assert "invalid choice" in capsys.readouterr().err


# ==================================================================================== bench

FAKE_BENCH = textwrap.dedent('''
    import sys, time
    print("table for", sys.argv[1:])
    for n in range(3):
        print(f"  case {n} done", file=sys.stderr)
        time.sleep(0.15)
    sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
''')


def fast_progress(monkeypatch):
    original = cli.ProgressLine.__init__

    def init(self, stream, label, show=True, delay=3.0, interval=0.2):
        original(self, stream, label, show=show, delay=0.05, interval=0.02)

    monkeypatch.setattr(cli.ProgressLine, "__init__", init)


def test_bench_runs_the_suite_and_passes_its_arguments(tmp_path, capfd):
    report = tmp_path / "bench.json"
    status = cli.main(["bench", "--no-progress", "--sizes", "8x8x5", "--repeat", "1",
                       "--stencils", "copy", "--no-c", "--no-numba", "--overhead-calls", "0",
                       "--json", str(report)])
    out, err = capfd.readouterr()
    assert status == 0, err
    assert "8x8x5" in out and "copy" in out
    assert report.is_file()
    assert "\r" not in err


def test_bench_passes_log_lines_and_exit_status_through(tmp_path, capfd, monkeypatch):
    script = tmp_path / "run.py"
    script.write_text(FAKE_BENCH)
    fast_progress(monkeypatch)
    status = cli.main(["bench", "--script", str(script), "--no-progress", "--repeat", "3"])
    out, err = capfd.readouterr()
    assert status == 3
    assert out == "table for ['--repeat', '3']\n"
    assert err == "  case 0 done\n  case 1 done\n  case 2 done\n"


def test_bench_progress_line_on_a_terminal(tmp_path, capfd, monkeypatch):
    script = tmp_path / "run.py"
    script.write_text(FAKE_BENCH)
    fast_progress(monkeypatch)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    status = cli.main(["bench", "--script", str(script)])
    out, err = capfd.readouterr()
    assert status == 0 and out.startswith("table for []")
    assert re.search(r"\rgtscript bench: running \d+ s, progress lines: \d", err)
    logged = [line.rsplit("\r", 1)[-1] for line in err.split("\n")]
    assert logged[:3] == ["  case 0 done", "  case 1 done", "  case 2 done"]
    assert err.endswith("\r") and err.rsplit("\r", 2)[-2].strip() == ""   # erased at the end


def test_bench_without_the_script_is_explained(tmp_path, capsys):
    status, _, err = run_cli(capsys, "bench", "--script", tmp_path / "run.py")
    assert status == 2 and "benchmark suite is not installed" in err


def test_bench_without_a_checkout_runs_the_built_in_benchmark(tmp_path, capfd, monkeypatch):
    """After `pip install` there is no benchmarks/run.py next to the package: `bench` runs
    the package's own small benchmark, with the same arguments it shares with the suite."""
    monkeypatch.setattr(cli, "BENCH_SCRIPT", tmp_path / "benchmarks" / "run.py")
    report = tmp_path / "bench.json"
    status = cli.main(["bench", "--no-progress", "--sizes", "12x12x6", "--repeat", "1",
                       "--backend", "cpu", "numpy", "--json", str(report)])
    out, err = capfd.readouterr()
    assert status == 0, err
    assert "running the built-in benchmark" in err
    assert "built-in benchmark" in out.splitlines()[0]
    for name in ("copy", "laplacian", "hdiff", "column_sum"):
        assert re.search(rf"^{name} +cpu +12x12x6 ", out, re.M), out
    results = json.loads(report.read_text())["results"]
    assert {(r["stencil"], r["backend"]) for r in results} == {
        (n, b) for n in ("copy", "laplacian", "hdiff", "column_sum") for b in ("cpu", "numpy")}
    # an option only the full suite has is explained, not ignored
    status = cli.main(["bench", "--no-progress", "--no-numba"])
    out, err = capfd.readouterr()
    assert status == 2 and "--no-numba: not an option of the built-in benchmark" in err


def test_bench_runs_from_an_installed_package(tmp_path):
    """`python -m gtscript bench` with only the package on the path (a copy of gtscript/,
    no checkout around it), from another directory."""
    site = tmp_path / "site"
    shutil.copytree(Path(cli.__file__).parent, site / "gtscript",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "gtscript", "bench", "--no-progress", "--sizes",
                           "10x10x5", "--repeat", "1", "--stencils", "laplacian"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{site / 'benchmarks' / 'run.py'} is not here" in done.stderr  # the copy ran
    assert "running the built-in benchmark" in done.stderr
    assert re.search(r"^laplacian +cpu +10x10x5 ", done.stdout, re.M), done.stdout


def test_progress_line_appears_only_after_the_delay():
    quick = io.StringIO()
    with cli.ProgressLine(quick, "job", delay=5.0) as progress:
        progress.write("one\n")
    assert quick.getvalue() == "one\n"

    hidden = io.StringIO()
    with cli.ProgressLine(hidden, "job", show=False, delay=0.0) as progress:
        time.sleep(0.05)
        progress.write("two\n")
    assert hidden.getvalue() == "two\n"


def test_progress_line_keeps_log_lines_above_it():
    stream = io.StringIO()
    with cli.ProgressLine(stream, "job", delay=0.02, interval=0.01) as progress:
        deadline = time.monotonic() + 10
        while "\rjob: " not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        progress.write("first\n")
        progress.write("second\n")
        assert progress.lines == 2
    text = stream.getvalue()
    assert re.match(r"\rjob: running \d+ s, progress lines: 0", text)
    # a log line erases the status line, is written, and the status line is drawn again
    assert re.search(r"\r {33,}\rfirst\n\rjob: running \d+ s, progress lines: 1", text)
    assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""
