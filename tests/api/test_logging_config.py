"""The gtscript logger (build phases and times, where the code came from, the build's
choices), verbose=True, and the environment variables' table and value checks."""

import logging
import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import gtscript
from gtscript import PARALLEL, Field, computation, config, interval

ROOT = Path(__file__).resolve().parents[2]


def scale(a: Field[np.float64], b: Field[np.float64], w: float):
    with computation(PARALLEL), interval(...):
        b = w * a[1, 0, 0]


def _records(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "gtscript"]


def test_build_is_logged_with_phases_source_and_choices(caplog, tmp_path, monkeypatch):
    monkeypatch.setenv("GTSCRIPT_CACHE_DIR", str(tmp_path / "cache"))
    caplog.set_level(logging.DEBUG, logger="gtscript")
    st = gtscript.stencil("cpu", scale, rebuild=True)
    first = _records(caplog)
    assert len(first) == 2, first
    assert re.fullmatch(r"scale \(cpu\): built in [0-9.]+ ms \(frontend [0-9.]+, .*optimise "
                        r"[0-9.]+, object [0-9.]+.* ms\); code from a fresh compilation; "
                        r"disk index miss: frontend ran; key [0-9a-f]{16}", first[0]), first[0]
    assert first[0].endswith(st.build_info["cache_key"][:16])
    n = st.build_info["llvm_functions"]
    assert first[1] == f"scale (cpu): {n} LLVM function(s), all fully optimised"
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "gtscript")
    # the same decoration again: the decorator's memory table
    caplog.clear()
    again = gtscript.stencil("cpu", scale)
    assert again is st
    (hit,) = _records(caplog)
    assert re.fullmatch(r"scale \(cpu\): [0-9.]+ ms, from the decorator's memory table .*", hit)
    # numbers agree with build_info
    a, b = np.arange(60.0).reshape(5, 3, 4), np.zeros((4, 3, 4))
    st(a, b, w=2.0, origin={"a": (0, 0, 0), "b": (0, 0, 0)}, domain=(4, 3, 4))
    assert np.array_equal(b, 2.0 * a[1:5])


def test_disk_cache_hit_names_the_directory(tmp_path):
    """A fresh process finds the code on disk: the record says so and where."""
    script = tmp_path / "defs.py"
    script.write_text(textwrap.dedent("""
        import logging, sys
        import numpy as np
        import gtscript
        from gtscript import PARALLEL, Field, computation, interval
        logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(name)s|%(message)s")

        @gtscript.stencil(backend="cpu")
        def add_one(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                b = a + 1.0
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GTSCRIPT_CACHE_DIR": str(tmp_path / "c")}
    runs = [subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env=env, timeout=300) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first = [l for l in runs[0].stdout.splitlines() if l.startswith("gtscript|")]
    second = [l for l in runs[1].stdout.splitlines() if l.startswith("gtscript|")]
    assert "code from a fresh compilation" in first[0]
    assert f"code from the disk cache in {tmp_path / 'c'}" in second[0], second
    assert "the disk index gave the definition tree (frontend skipped)" in second[0]


def test_verbose_prints_the_build_when_logging_is_not_configured(tmp_path):
    code = textwrap.dedent("""
        import numpy as np
        import gtscript
        from gtscript import PARALLEL, Field, computation, interval

        @gtscript.stencil(backend="numpy", verbose=True)
        def copy(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                b = a

        @gtscript.stencil(backend="numpy")
        def quiet(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                b = a
    """)
    script = tmp_path / "verbose.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT),
                                            "GTSCRIPT_CACHE_DIR": str(tmp_path / "c")})
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gtscript: copy (numpy): built in "), lines
    assert done.stdout == ""


def test_verbose_logs_at_info(caplog):
    caplog.set_level(logging.INFO, logger="gtscript")
    gtscript.stencil("numpy", scale, verbose=True, rebuild=True)
    records = [r for r in caplog.records if r.name == "gtscript"]
    assert records and all(r.levelno == logging.INFO for r in records)
    assert records[0].getMessage().startswith("scale (numpy): built in ")
    caplog.clear()
    gtscript.stencil("numpy", scale, rebuild=True)  # not verbose: DEBUG, below the level
    assert not [r for r in caplog.records if r.name == "gtscript"]
    with pytest.raises(TypeError, match="verbose must be True or False, got 'yes'"):
        gtscript.stencil("numpy", scale, verbose="yes")


# ============================================================== environment variables

BAD = {
    "GTSCRIPT_CACHE_MAX_BYTES": ["1G", "-5", "12.5"],
    "GTSCRIPT_CACHE_MEMORY_ENTRIES": ["many", "-1", "+3"],
    "GTSCRIPT_NUM_THREADS": ["0", "four", "4abc", "-2"],
    "GTSCRIPT_TILE_SIZE": ["32", "0x8", "32x", "32*8", "x8"],
    "GTSCRIPT_LLVM_BUDGET": ["-1", "ten", "nan"],
    "GTSCRIPT_CODEGEN_LEVEL": ["4", "-1", "O2"],
    "GTSCRIPT_LSR": ["yes", "2", "true"],
    "GTSCRIPT_PART_NESTS": ["0", "x"],
    "GTSCRIPT_GPU_ARCH": ["90", "sm_9", "compute_90", "sm_90x"],
}
GOOD = {
    "GTSCRIPT_CACHE_MAX_BYTES": ["0", "1073741824"],
    "GTSCRIPT_CACHE_MEMORY_ENTRIES": ["0", "256"],
    "GTSCRIPT_NUM_THREADS": ["1", "64"],
    "GTSCRIPT_TILE_SIZE": ["32x8", "1x1"],
    "GTSCRIPT_LLVM_BUDGET": ["0", "2.5", "10"],
    "GTSCRIPT_CODEGEN_LEVEL": ["0", "3"],
    "GTSCRIPT_LSR": ["0", "1"],
    "GTSCRIPT_PART_NESTS": ["1", "16"],
    "GTSCRIPT_GPU_ARCH": ["sm_80", "sm_90a", "sm_100f"],
    "GTSCRIPT_CACHE_DIR": ["/tmp/anything", "relative/dir"],
}


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(config, "_warned", set())


@pytest.mark.parametrize("name,value", [(n, v) for n, vs in BAD.items() for v in vs])
def test_invalid_value_warns_naming_variable_and_value(name, value, fresh_warnings):
    with pytest.warns(config.EnvironmentVariableWarning) as record:
        config.check_environment({name: value})
    (w,) = record
    assert str(w.message).startswith(f"{name}={value!r} is not valid (expected ")
    # once per value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config.check_environment({name: value})


def test_valid_values_and_empty_ones_do_not_warn(fresh_warnings):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, values in GOOD.items():
            for value in values:
                config.check_environment({name: value})
        config.check_environment({name: "" for name in BAD})  # empty = unset


def test_import_and_build_check_the_environment(tmp_path):
    code = textwrap.dedent("""
        import warnings
        warnings.simplefilter("always")
        import numpy as np
        import gtscript, os
        from gtscript import PARALLEL, Field, computation, interval
        os.environ["GTSCRIPT_TILE_SIZE"] = "big"

        @gtscript.stencil(backend="numpy")
        def copy(a: Field[np.float64], b: Field[np.float64]):
            with computation(PARALLEL), interval(...):
                b = a
    """)
    script = tmp_path / "env.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT),
                                            "GTSCRIPT_NUM_THREADS": "lots",
                                            "GTSCRIPT_CACHE_DIR": str(tmp_path / "c")})
    assert done.returncode == 0, done.stderr
    assert "EnvironmentVariableWarning: GTSCRIPT_NUM_THREADS='lots' is not valid" in done.stderr
    assert "EnvironmentVariableWarning: GTSCRIPT_TILE_SIZE='big' is not valid" in done.stderr
    assert f"{script}:" in done.stderr  # the build's warning points at the user's decoration


def _names_read_by_the_sources() -> set[str]:
    names = set()
    for path in (ROOT / "csrc").rglob("*.c"):
        names |= set(re.findall(r'getenv\("([A-Z_0-9]+)"\)', path.read_text()))
        names |= set(re.findall(r'env\("([A-Z_0-9]+)"\)', path.read_text()))  # nonempty_env
        # tables of names read in a loop (nvrtc.c: CUDA_HOME, CUDA_PATH)
        for table in re.findall(r"envs\[\] = \{([^}]*)\}", path.read_text()):
            names |= set(re.findall(r'"([A-Z_0-9]+)"', table))
    for path in (ROOT / "gtscript").rglob("*.py"):
        text = path.read_text()
        names |= set(re.findall(r'environ(?:\.get)?\(?\[?"(GTSCRIPT_[A-Z_0-9]+)"', text))
    return names


def test_every_variable_the_sources_read_is_in_the_table():
    read = _names_read_by_the_sources()
    assert {"GTSCRIPT_NUM_THREADS", "GTSCRIPT_CACHE_DIR", "CUDA_HOME"} <= read  # the scan works
    listed = {v.name for v in config.VARIABLES}
    assert read - {"HOME"} <= listed, read - listed
    assert listed <= read, listed - read


def test_docs_table_is_the_one_in_the_code():
    assert config.table() in (ROOT / "docs" / "configuration.md").read_text()
