"""gtscript.distributed under real MPI: pytest launches `mpiexec -n 4` (and 2) on the
scripts in tests/mpi/, with a timeout, and checks what every rank printed. The scripts
compare each distributed run bit for bit with a single-process run of the same stencil
(and the single-process run with hand-written NumPy)."""

import os
import re
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MPI_DIR = os.path.join(ROOT, "tests", "mpi")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def mpiexec(n, script, *args, timeout=240, runner=True, env=None):
    """Run ``script`` on ``n`` ranks; returns (returncode, output). MPIEXEC_TIMEOUT makes
    mpiexec itself end a job that runs too long, so no rank outlives the test."""
    if not os.path.exists(MPIEXEC):
        pytest.fail(f"{MPIEXEC} is missing: install the mpi extra (pip install -e '.[mpi]')")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               # 4 ranks on 2 cores: MPICH's ranks yield instead of busy-polling
               MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS=os.environ.get(
                   "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_NUM_CELLS", "64"),
               MPIEXEC_TIMEOUT=str(timeout - 5), **(env or {}))
    cmd = [MPIEXEC, "-n", str(n), sys.executable, *(["-m", "mpi4py"] if runner else []),
           os.path.join(MPI_DIR, script), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)
    return proc.returncode, proc.stdout + proc.stderr


def oks(output):
    return set(re.findall(r"OK (\S+) rank (\d+)", output))


def expect_all(output, n, cases):
    found = oks(output)
    missing = [(c, str(r)) for c in cases for r in range(n) if (c, str(r)) not in found]
    assert not missing, f"missing {missing[:5]}\n{output[-4000:]}"


def test_import_error_names_the_install_command(tmp_path):
    """Without mpi4py the import fails with the command that installs it."""
    blocker = tmp_path / "mpi4py"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('no mpi4py here')\n")
    code = ("try:\n    import gtscript.distributed\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"),
                         timeout=60).stdout
    assert "pip install 'gtscript[mpi]'" in out and "mpi4py mpich" in out


CASES_4 = (["hdiff-periodic-cpu-overlap0", "hdiff-periodic-cpu-overlap1",
            "float32-F-overlap0", "float32-F-overlap1", "numpy-backend-overlap0",
            "numpy-backend-overlap1", "column-solver", "scatter-gather-exchange", "errors", "overlap-bands"]
           + [f"walls-{d}-overlap{o}" for d in ("2x2", "4x1", "1x4") for o in (0, 1)]
           + [f"regions-{d}-overlap{o}" for d in ("2x2", "4x1", "1x4", "periodic", "float32-F")
              for o in (0, 1)] + ["regions-one-build"]
           + [f"regions-one-sided-{d}-overlap{o}" for d in ("2x2", "4x1") for o in (0, 1)])


def test_four_ranks_match_a_single_process():
    rc, out = mpiexec(4, "check_distributed.py")
    assert rc == 0, out[-4000:]
    expect_all(out, 4, CASES_4)
    # the bad-decomposition errors: the same text on every rank
    errors = re.findall(r"ERROR ('[^']*') rank (\d): (.*)", out)
    by_case: dict = {}
    for case, rank, text in errors:
        by_case.setdefault(case, {})[rank] = text
    assert len(by_case) == 7, by_case
    for case, texts in by_case.items():
        assert sorted(texts) == ["0", "1", "2", "3"], (case, texts)
        assert len(set(texts.values())) == 1, (case, texts)


def test_two_ranks_match_a_single_process():
    rc, out = mpiexec(2, "check_distributed.py", "hdiff_periodic", "walls_uneven",
                      "float32_fortran", "scatter_gather_exchange", "regions")
    assert rc == 0, out[-4000:]
    expect_all(out, 2, ["hdiff-periodic-cpu-overlap0", "hdiff-periodic-cpu-overlap1",
                        "float32-F-overlap1", "scatter-gather-exchange",
                        "walls-2x1-overlap0", "walls-2x1-overlap1", "walls-1x2-overlap1",
                        "regions-2x1-overlap1", "regions-1x2-overlap0", "regions-periodic-overlap1"])


def test_one_rank_builds_the_others_load():
    """Private cache per rank: rank 0 compiles (module_source "build", one miss), ranks 1-3
    load the broadcast object from disk (no miss, no compile), all with one key."""
    rc, out = mpiexec(4, "check_one_build.py")
    assert rc == 0, out[-4000:]
    rows = re.findall(r"SOURCE (\d) (\S+) ([0-9a-f]{64}) misses=(\d+) disk_hits=(\d+)",
                      out)
    assert len(rows) == 4, out
    by_rank = {int(r): (src, key, int(m), int(d)) for r, src, key, m, d in rows}
    assert by_rank[0][0] == "build" and by_rank[0][2] == 1
    for rank in (1, 2, 3):
        assert by_rank[rank][0] == "disk" and by_rank[rank][2] == 0 and by_rank[rank][3] == 1
    assert len({key for _, key, _, _ in by_rank.values()}) == 1
    # the root raises the build's own error, the others a RuntimeError naming it
    assert sorted(re.findall(r"BUILD-ERROR (\d) (\w+)", out)) == [
        ("0", "GTScriptSemanticError"), ("1", "RuntimeError"), ("2", "RuntimeError"),
        ("3", "RuntimeError")], out


def test_an_error_on_one_rank_does_not_hang_the_others():
    """One rank passes run() an argument of another dtype: every rank raises the same error
    before any message (the collective check), and under `python -m mpi4py` the uncaught
    exception aborts the whole job."""
    rc, out = mpiexec(4, "check_abort.py", timeout=120)
    assert rc != 0
    assert "UNREACHABLE" not in out
    assert "the ranks disagree in run on argument 'out': rank 0 has float64 with shape (2,) " \
           "beyond I and J, rank 1 has float32" in out, out[-3000:]
    # (mpiexec's own "MPI_Abort" line may be lost when the job is torn down: not asserted; the
    # job ending with an error within the timeout, no rank reaching the end, is the property)


def test_the_example_matches_the_single_process_run():
    rc, out = mpiexec(4, os.path.join("..", "..", "examples", "distributed_diffusion.py"))
    assert rc == 0, out[-3000:]
    assert "4 ranks (2, 2), 20 steps on (64, 48, 8): matches the single-process result bit for " \
           "bit" in out, out


def _refusals_script():
    return '''
import numpy as np
import gtscript
from gtscript import PARALLEL, Field, computation, interval, distributed


def two_parts(a: Field[np.float64], b: Field[np.float64], c: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        a = b
    with computation(PARALLEL), interval(...):
        c = a[1, 0, 0]


def wide(a: Field[np.float64], c: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        c = a[-3, 0, 0]


st, wd = gtscript.stencil("cpu", two_parts), gtscript.stencil("cpu", wide)
dec = distributed.Decomposition((8, 8, 2), 2, periodic=(True, True))
a, b, c = dec.zeros(), dec.zeros(), dec.zeros()
for call, kind, text in ((lambda: dec.run(st, a, b, c), ValueError, "written and read"),
                         (lambda: dec.run(wd, a, c), ValueError, "more than the decomposition"),
                         (lambda: dec.run(wd, a, c, origin=(0, 0, 0)), TypeError, "sets origin")):
    before = [x.copy() for x in (a, b, c)]
    try:
        call()
    except kind as exc:
        assert text in str(exc), str(exc)
        assert all(np.array_equal(x, y) for x, y in zip(before, (a, b, c)))
        print(f"REFUSED {text}", flush=True)  # one write: the ranks' lines stay whole
'''


def test_run_refuses_what_it_cannot_do_right(tmp_path):
    script = tmp_path / "refusals.py"
    script.write_text(_refusals_script())
    rc, out = mpiexec(2, str(script), timeout=120)
    assert rc == 0, out[-3000:]
    for text in ("written and read", "more than the decomposition", "sets origin"):
        assert out.count(f"REFUSED {text}") == 2, out[-3000:]


# ---- ranks that do not agree (tests/mpi/check_hostile.py)


def test_mixed_layouts_exchange_right():
    """Fortran order on some ranks, C order on the others (and packing on some, datatypes on
    the others): every halo holds its neighbour's values, not their transpose."""
    start = time.monotonic()
    rc, out = mpiexec(4, "check_hostile.py", "mixed_layouts", timeout=90)
    assert rc == 0, out[-4000:]
    expect_all(out, 4, ["mixed-layouts"])
    assert time.monotonic() - start < 60


#: case -> what the error says (on every rank, the same text)
DISAGREEMENTS = {
    "dtype": "disagree in exchange on field 0: rank 0 has float64 with shape (3,) beyond I "
             "and J, rank 3 has float32 with shape (3,)",
    "k-size": "disagree in exchange on field 0: rank 0 has float64 with shape (3,) beyond I "
              "and J, rank 1 has float64 with shape (4,)",
    "data-dims": "rank 2 has float64 with shape (3, 2) beyond I and J",
    "widths": "disagree in exchange on the widths of field 0: rank 0 has ((2, 2), (2, 2)), "
              "rank 2 has ((1, 1), (1, 1))",
    "field-count": "disagree in exchange on the number of fields: rank 0 has 1, rank 1 has 2",
    "start-exchange": "disagree in exchange on the number of fields: rank 0 has 2, rank 1 "
                      "has 1",
    "widths-malformed": "rank 1: widths must be one ((i_lo, i_hi), (j_lo, j_hi)) per field, "
                        "got [(1, 2, 3)]",
    "read-only": "rank 2: field 0 of the exchange is read-only",
    "negative-strides": "rank 3: field 0 of the exchange has negative strides, which "
                        "method='datatype' cannot describe",
    "method": "rank 0: method must be 'datatype' or 'pack', got 'packed'",
    "scatter-root": "disagree in scatter on the root: rank 0 has 0, rank 3 has 1",
    "gather-root": "disagree in gather on the root: rank 0 has 2, rank 1 has 0",
    "gather-dtype": "disagree in gather on the local array: rank 0 has float64",
    "scatter-vs-exchange": "disagree on the collective operation: rank 0 is in exchange, "
                           "rank 2 in scatter",
    "root-out-of-range": "rank 0: root must be a rank of the communicator (0 to 3), got 4",
    "stencil-key": "disagree in run on the stencil (its cache key)",
    "run-argument-dtype": "disagree in run on argument 'out': rank 0 has float64",
    "build-root": "disagree in distributed.stencil on the root: rank 0 has 0, rank 2 has 1",
}


def test_disagreeing_ranks_raise_the_same_error_on_every_rank():
    """Ranks that disagree on a collective operation's dtype, K size, data dimensions, halo
    widths, number of fields, root, operation or stencil, and one rank whose own arguments
    are wrong: the same DecompositionError on every rank, and the decomposition still works
    afterwards."""
    start = time.monotonic()
    rc, out = mpiexec(4, "check_hostile.py", "disagreements", timeout=90)
    assert rc == 0, out[-4000:]
    expect_all(out, 4, ["disagreements"])
    by_case: dict = {}
    for case, rank, text in re.findall(r"ERROR (\S+) rank (\d): (.*)", out):
        by_case.setdefault(case, {})[rank] = text
    assert sorted(by_case) == sorted(DISAGREEMENTS), sorted(by_case)
    for case, texts in by_case.items():
        assert sorted(texts) == ["0", "1", "2", "3"], (case, texts)
        assert len(set(texts.values())) == 1, (case, texts)
        assert DISAGREEMENTS[case] in texts["0"], (case, texts["0"])
    assert time.monotonic() - start < 60


TIMED_OUT = ("not every rank of the communicator reached the exchange within the "
             "decomposition's timeout of 2 s")


@pytest.mark.parametrize("case, runner, timeout, expect, survivors", [
    # the runner turns rank 1's exception into MPI_Abort: every rank ends at once
    ("raises", True, None, "rank 1 gave up before the exchange", 0),
    # without the runner, the others give up after the decomposition's timeout
    ("raises", False, 2, TIMED_OUT, 3),
    # a process that ends without MPI_Finalize: mpiexec ends the job
    ("dies", True, None, None, 0),
    # a rank that returns quietly: only the timeout ends the others' wait
    ("leaves", True, 2, TIMED_OUT, 1),
])
def test_a_rank_that_raises_dies_or_leaves_ends_the_job(case, runner, timeout, expect,
                                                         survivors):
    start = time.monotonic()
    rc, out = mpiexec(4, "check_hostile.py", case, timeout=60, runner=runner,
                      env={"HOSTILE_TIMEOUT": str(timeout or "")})
    elapsed = time.monotonic() - start
    assert rc != 0, out[-3000:]
    assert "UNREACHABLE" not in out, out[-3000:]
    if expect is not None:
        assert expect in out, out[-3000:]
        assert out.count(expect) >= survivors, out[-3000:]
    assert elapsed < 30, (elapsed, out[-3000:])
