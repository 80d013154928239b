"""The benchmark suite (benchmarks/) runs end to end in a tiny configuration, so it cannot rot.

These are not timing tests: they check that every implementation is verified, that the table,
the JSON and the chart come out, and that the byte model and the verification step work.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks")
sys.path.insert(0, BENCH)
import suite  # noqa: E402

HAVE_NUMBA = importlib.util.find_spec("numba") is not None
HAVE_GT4PY = importlib.util.find_spec("gt4py") is not None
STENCILS = ["copy", "laplacian", "hdiff", "thomas", "advection"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    cmd = [sys.executable, os.path.join(BENCH, "run.py"), "--sizes", "16x16x8", "--repeat", "1",
           "--dtypes", "float64", "float32", "--stream-mib", "4", "--overhead-calls", "2000",
           "--no-gt4py", "--json", str(out / "r.json"), "--plot", str(out / "r.png")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with open(out / "r.json") as f:
        report = json.load(f)
    return done.stdout, report, out / "r.png"


def test_prints_a_markdown_table_with_every_column(tiny_run):
    stdout, _, _ = tiny_run
    header = next(line for line in stdout.splitlines() if line.startswith("| stencil"))
    for column in ["gtscript ms", "GB/s", "% STREAM", "NumPy ms", "C ms", "vs NumPy", "vs C"]:
        assert column in header
    assert ("Numba ms" in header) == HAVE_NUMBA
    rows = [line for line in stdout.splitlines() if line.startswith("| ") and "16x16x8" in line]
    assert len(rows) == 2 * len(STENCILS)
    assert all(row.count("|") == header.count("|") for row in rows)
    assert "STREAM-style copy" in stdout and "call overhead" in stdout


def test_json_holds_every_case_with_times_ratios_and_bandwidth(tiny_run):
    _, report, _ = tiny_run
    expected_columns = {"gtscript[cpu]", "numpy", "c"} | ({"numba"} if HAVE_NUMBA else set())
    cases = {(r["stencil"], r["dtype"]) for r in report["results"]}
    assert cases == {(s, d) for s in STENCILS for d in ("float64", "float32")}
    for r in report["results"]:
        assert set(r["timings"]) == expected_columns
        for timing in r["timings"].values():
            assert timing["ms"] > 0 and timing["gb_s"] > 0 and timing["calls"] == 1
        assert set(r["speedup_vs"]) == expected_columns - {"gtscript[cpu]"}
        assert r["speedup_vs"]["c"] == pytest.approx(
            r["timings"]["c"]["ms"] / r["timings"]["gtscript[cpu]"]["ms"])
        assert 0 < r["stream_fraction"]
    stream = report["stream"]
    assert stream["gb_s"] == max(stream["start"]["gb_s"], stream["end"]["gb_s"]) > 0
    overhead = report["call_overhead"]
    assert overhead["calls"] == 2000 and overhead["gtscript_us"] > 0
    assert isinstance(overhead["rss_growth_bytes"], int)


def test_writes_a_png_chart(tiny_run):
    _, _, png = tiny_run
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_bytes_moved_counts_inputs_once_and_the_output_domain_once():
    shape = (16, 16, 8)
    inputs, _, out_name = suite._inputs("hdiff", np.random.default_rng(0), shape, np.float64)
    out = np.zeros(shape)
    assert suite._bytes_moved(inputs, out, halo=2) == (2 * 16 * 16 * 8 + 12 * 12 * 8) * 8
    inputs, scalars, _ = suite._inputs("advection", np.random.default_rng(0), shape, np.float32)
    assert list(inputs) == ["q", "u", "v", "w"] and list(scalars) == ["dtdx", "dtdy", "dtdz"]
    assert suite._bytes_moved(inputs, out.astype(np.float32), halo=1) == (4 * 16 * 16 * 8
                                                                          + 14 * 14 * 8) * 4


def test_a_wrong_implementation_is_caught_before_timing():
    def wrong(arrays, scalars, halo):
        arrays["out"][...] = 1.0

    def right(arrays, scalars, halo):
        np.copyto(arrays["out"], arrays["inp"])

    impls = {"gtscript[cpu]": {"copy": wrong}, "numpy": {"copy": right}}
    with pytest.raises(AssertionError, match="gtscript.cpu. disagrees with the NumPy reference"):
        suite.run_case("copy", (8, 8, 8), np.float64, impls, suite.Options(repeat=1),
                       np.random.default_rng(0))


def test_targets_name_the_cases_that_miss_them():
    import report

    def case(stencil, size, vs_c, vs_numba, vs_numpy, stream):
        return {"stencil": stencil, "size": size, "dtype": "float64", "stream_fraction": stream,
                "speedup_vs": {"c": vs_c, "numba": vs_numba, "numpy": vs_numpy}}

    lines = report.targets({
        "results": [case("hdiff", "256x256x80", 0.95, 1.2, 12.0, 0.85),
                    case("thomas", "512x512x80", 0.5, 1.6, 30.0, 0.2),
                    case("copy", "64x64x64", 0.1, 0.1, 0.1, 0.1)],  # too small to count
        "call_overhead": {"gtscript_us": 6.0, "calls": 1000, "rss_growth_bytes": 4096}})
    assert lines[0] == ("target vs C >= 0.9x (grids >= 256x256x80): 1/2 met; "
                        "missed: thomas 512x512x80 float64 0.50x")
    assert lines[1].endswith("1/2 met; missed: hdiff 256x256x80 float64 1.20x")
    assert lines[2].endswith("1/1 met") and lines[3].endswith("1/1 met")
    assert "6.00 us (missed)" in lines[4] and "4096 bytes (missed)" in lines[4]


def test_fortran_order_column(tmp_path):
    cmd = [sys.executable, os.path.join(BENCH, "run.py"), "--sizes", "12x10x6", "--repeat", "1",
           "--stencils", "hdiff", "thomas", "--no-numba", "--no-c", "--overhead-calls", "0",
           "--fortran", "--json", str(tmp_path / "r.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("| stencil"))
    assert "gtscript[cpu] F-order ms" in header and "vs gtscript[cpu] F-order" in header
    with open(tmp_path / "r.json") as f:
        report = json.load(f)
    for r in report["results"]:  # verified against NumPy like every column, then timed
        assert r["timings"]["gtscript[cpu] F-order"]["ms"] > 0


def test_gt4py_column_and_one_thread(tmp_path):
    # GT4Py's numpy backend as a column (verified against NumPy like every column), and the
    # thread count handed to every runtime
    cmd = [sys.executable, os.path.join(BENCH, "run.py"), "--sizes", "12x10x6", "--repeat", "1",
           "--stencils", "laplacian", "thomas", "--dtypes", "float32", "--no-numba", "--no-c",
           "--overhead-calls", "0", "--threads", "1", "--fortran", "--json", str(tmp_path / "r.json")]
    env = {**os.environ, "GT_CACHE_ROOT": str(tmp_path / "gt4py")}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "r.json") as f:
        report = json.load(f)
    assert report["machine"]["threads_env"]["GTSCRIPT_NUM_THREADS"] == "1"
    assert report["machine"]["threads_env"]["OMP_NUM_THREADS"] == "1"
    header = next(line for line in done.stdout.splitlines() if line.startswith("| stencil"))
    assert ("GT4Py numpy ms" in header) == HAVE_GT4PY
    for r in report["results"]:
        assert ("gt4py[numpy]" in r["timings"]) == HAVE_GT4PY
        if HAVE_GT4PY:
            assert r["timings"]["gt4py[numpy]"]["ms"] > 0
            assert r["speedup_vs"]["gt4py[numpy]"] == pytest.approx(
                r["timings"]["gt4py[numpy]"]["ms"] / r["timings"]["gtscript[cpu]"]["ms"])
    assert not os.path.exists(os.path.join(os.getcwd(), ".gt_cache"))


def test_gt4py_and_layout_targets():
    import report

    def case(stencil, vs_f, vs_gt4py):
        return {"stencil": stencil, "size": "256x256x80", "dtype": "float32", "stream_fraction": None,
                "speedup_vs": {"gtscript[cpu] F-order": vs_f, "gt4py[numpy]": 50.0,
                               "gt4py[dace:cpu]": vs_gt4py}}

    lines = report.targets({"results": [case("thomas", 0.8, 1.3), case("laplacian", 0.95, 1.1)]})
    assert lines[0] == ("target vs GT4Py's best >= 1.2x (grids >= 256x256x80): 1/2 met; "
                        "missed: laplacian 256x256x80 float32 1.10x")
    assert lines[1].endswith("1/2 met; missed: thomas 256x256x80 float32 0.80")


def test_gtscript_calls_settle_their_plan_before_timing(monkeypatch):
    # the cpu backend's first calls on a domain may each run a candidate plan: the suite calls
    # until exec_info says the plan is no longer being measured, before it times anything
    monkeypatch.setenv("GTSCRIPT_AUTOTUNE_MIN_MS", "0")  # tune however short the call
    import definitions

    import gtscript

    stencil = gtscript.stencil("cpu", definitions.definitions(np.float64)["laplacian"])
    call = suite._gtscript_call(stencil)
    shape = (23, 19, 7)  # a domain no other test uses: its plan is measured afresh
    arrays = {"inp": np.random.default_rng(0).standard_normal(shape), "out": np.zeros(shape)}
    call.settle(arrays, {}, 1, evict=False)
    info = {}
    call(arrays, {}, 1, exec_info=info)
    assert info["plan"]["tuning"]["state"] == "measured"


def test_streaming_table_and_json(tmp_path):
    # benchmarks/streaming.py: one child per setting (plain, streaming, tuned) and layout
    cmd = [sys.executable, os.path.join(BENCH, "streaming.py"), "--size", "12", "10", "8",
           "--repeat", "1", "--threads", "1", "--stencils", "laplacian", "--dtypes", "float32",
           "--json", str(tmp_path / "s.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| laplacian")]
    assert [r.split("|")[3].strip() for r in rows] == ["C", "F"]
    with open(tmp_path / "s.json") as f:
        report = json.load(f)
    assert report["size"] == [12, 10, 8] and len(report["rows"]) == 2
    for r in report["rows"]:
        assert r["plain_ms"] > 0 and r["streaming_ms"] > 0 and r["threads"] == 1
        # a 12x10x8 output fits any L2: the model never streams it
        assert r["tuned"]["streaming"] is False
        assert r["tuned"]["why"] == "model: outputs fit the L2 caches"


@pytest.mark.skipif(not HAVE_GT4PY, reason="benchmarks/gt4py_api.py measures GT4Py's API")
def test_gt4py_api_table_and_json(tmp_path):
    # benchmarks/gt4py_api.py: gtscript through GT4Py's API against gtscript directly
    cmd = [sys.executable, os.path.join(BENCH, "gt4py_api.py"), "--repeat", "1", "--calls", "200",
           "--no-kfirst", "--json", str(tmp_path / "g.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| GT4Py API, gtscript:cpu |" in done.stdout
    assert "GT4Py API minus gtscript directly" in done.stdout
    with open(tmp_path / "g.json") as f:
        report = json.load(f)
    assert set(report["build"]) == {"gtscript.stencil('cpu')", "GT4Py API, gtscript:cpu",
                                    "GT4Py API, numpy"}
    for times in report["build"].values():
        assert times["cold_ms"] > 0 and times["cached_ms"] > 0
    ours = report["call"]["GT4Py API, gtscript:cpu"]
    assert set(ours) == {"__call__, validate_args=True", "__call__, validate_args=False", "run()"}
    assert all(us > 0 for us in ours.values())


def test_layout_offsets_table_json_and_check(tmp_path):
    # benchmarks/layout_offsets.py: gtscript and hand-written C on both layouts, checked first
    cmd = [sys.executable, os.path.join(BENCH, "layout_offsets.py"), "--size", "12", "10", "4",
           "--repeat", "1", "--json", str(tmp_path / "l.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1].strip() for line in done.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| pattern")]
    assert rows == ["copy", "I offsets", "J offsets", "laplacian"]
    with open(tmp_path / "l.json") as f:
        report = json.load(f)
    columns = {r["column"] for r in report["results"]}
    assert {"gtscript C", "gtscript F", "C order: joined", "F order: plain"} <= columns
    assert len(report["results"]) == 4 * len(columns) and all(r["ms"] > 0 for r in report["results"])
    # a kernel that computes the wrong thing is caught before anything is timed
    import layout_offsets

    base = np.random.default_rng(0).uniform(size=(6, 5, 3))
    out = np.zeros_like(base)

    def wrong():
        out[...] = base  # a copy where reads at I offsets were asked for

    with pytest.raises(AssertionError, match="I offsets: wrong one is wrong"):
        layout_offsets.check({(1, "wrong one"): (wrong, base, out)}, base)
