"""GT4Py's own backend-parametrised tests run with the gtscript backends added (long: run by
``make gt4py-upstream``, never by ``make test``).

    python tests/gt4py_upstream/run_upstream.py [--source DIR] [--version V] [-- pytest args]

1. GT4Py's test files: ``--source DIR`` (a GT4Py source tree with tests/cartesian_tests), or
   else GT4Py's sdist for the installed version, fetched with pip. (GT4Py's sdists up to
   1.1.12 and 1.2.3 hold no tests/ folder: then the script says so and goes on with step 3.)
2. With the files: pytest runs tests/cartesian_tests/integration_tests/multi_feature_tests/
   test_code_generation.py and test_suites.py, with a conftest that imports gtscript.gt4py and
   adds gtscript:cpu, gtscript:numpy (and gtscript:cuda where a GPU runs it) to the backend
   lists the tests are parametrised over (cartesian_tests.definitions' CPU_BACKENDS /
   ALL_BACKENDS and gt4py.cartesian.testing.definitions' name lists, where they exist), and
   selects the gtscript parameters (``-k gtscript``).
3. Always: GT4Py's shipped test machinery (``gt4py.cartesian.testing.StencilTestSuite``, the
   class GT4Py's test_suites.py is made of: Hypothesis-drawn domains and inputs, every
   backend's result against the suite's NumPy ``validation``, GT4Py's checks of the
   stencil's field_info) over the suites in suites_gtscript.py, on the gtscript backends and
   GT4Py's numpy backend.

The counts per backend are printed at the end (passed / failed / skipped).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

CONFTEST = '''
import pytest

import gtscript.gt4py  # noqa: F401  (registers the gtscript backends)

_NAMES = {names!r}


def _add(module, attr, as_params):
    values = getattr(module, attr, None)
    if not isinstance(values, list):
        return
    for name in _NAMES:
        values.append(pytest.param(name) if as_params else name)


try:
    import gt4py.cartesian.testing.definitions as _gtd
    for _attr in ("ALL_BACKEND_NAMES", "CPU_BACKEND_NAMES"):
        _add(_gtd, _attr, False)
except ImportError:
    pass
try:
    import cartesian_tests.definitions as _defs
    for _attr in ("CPU_BACKENDS", "ALL_BACKENDS", "NON_DACE_BACKENDS"):
        _add(_defs, _attr, True)
except ImportError:
    pass
'''

UPSTREAM_FILES = ("tests/cartesian_tests/integration_tests/multi_feature_tests/test_code_generation.py",
                  "tests/cartesian_tests/integration_tests/multi_feature_tests/test_suites.py")


def fetch_sdist(version: str, dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "gt4py",
           "--no-build-isolation", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}",
           f"gt4py=={version}", "-d", str(dest)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    sdist = next(dest.glob(f"gt4py-{version}.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(dest, filter="data")
    return dest / f"gt4py-{version}"


def tally(output: str) -> dict:
    counts: dict = collections.defaultdict(collections.Counter)
    for m in re.finditer(r"^(PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\s+(\S+)", output, re.M):
        outcome, test = m.groups()
        backend = next((b for b in ("gtscript:cpu", "gtscript:numpy", "gtscript:cuda", "numpy")
                        if b in test or b.replace(":", "_") in test), "other")
        counts[backend][outcome.lower()] += 1
    return counts


def run_pytest(args: list[str], cwd: Path, env: dict) -> str:
    # the project's addopts name plugins (markdown docs, notebooks) a bare GT4Py venv may lack
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-rA", "-q", *args]
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    sys.stdout.write(done.stdout[-4000:])
    return done.stdout


def main() -> int:
    import gt4py

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a GT4Py source tree (with tests/cartesian_tests)")
    parser.add_argument("--version", default=gt4py.__version__)
    parser.add_argument("--cuda", action="store_true", help="add gtscript:cuda (needs a GPU and CuPy)")
    parser.add_argument("pytest_args", nargs="*")
    opts = parser.parse_args()
    names = ["gtscript:cpu", "gtscript:numpy"] + (["gtscript:cuda"] if opts.cuda else [])

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    work = Path(tempfile.mkdtemp(prefix="gt4py-upstream-"))
    env.setdefault("GT_CACHE_ROOT", str(work / "gt_cache"))
    results = {}

    source = opts.source
    if source is None:
        try:
            source = fetch_sdist(opts.version, work)
        except (subprocess.CalledProcessError, StopIteration) as e:
            print(f"GT4Py {opts.version}: the sdist could not be fetched ({e})")
    tests = source / "tests" / "cartesian_tests" if source is not None else None
    if tests is not None and tests.is_dir():
        (source / "tests" / "conftest_gtscript.py").write_text(CONFTEST.format(names=names))
        files = [str(source / f) for f in UPSTREAM_FILES if (source / f).exists()]
        env_up = dict(env, PYTHONPATH=os.pathsep.join([str(source / "tests"), env["PYTHONPATH"]]))
        out = run_pytest(["-p", "conftest_gtscript", "-k", "gtscript", *files, *opts.pytest_args],
                         source / "tests", env_up)
        results["GT4Py's own tests"] = tally(out)
    else:
        print(f"GT4Py {opts.version}: {source} holds no tests/cartesian_tests "
              "(GT4Py's sdists ship none; pass --source with a GT4Py source tree to run them)")

    env_suites = dict(env, GTSCRIPT_GT4PY_BACKENDS=",".join(names + ["numpy"]), GTSCRIPT_STENCIL_SUITES="1")
    out = run_pytest([str(HERE / "suites_gtscript.py"), *opts.pytest_args], REPO, env_suites)
    results["StencilTestSuite suites"] = tally(out)

    print(f"\nGT4Py {gt4py.__version__}, Python {sys.version.split()[0]}:")
    for what, counts in results.items():
        print(f"  {what}:")
        for backend, c in sorted(counts.items()):
            print(f"    {backend:16s} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
