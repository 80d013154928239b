"""pytest configuration for what is tested outside tests/ (see pyproject's testpaths):

- the examples of the docstrings in gtscript/ (``--doctest-modules``), the API reference's
  examples;
- the ```python blocks of docs/*.md and README.md (pytest-markdown-docs, ``--markdown-docs``);
- the notebooks in notebooks/, each top to bottom on a fresh kernel (nbmake, ``--nbmake``).

The first two run in a temporary working directory, the notebooks in their own folder (their
links and files are relative to it). All of them get a private gtscript disk cache for the
session (the test suite's own, tests/conftest.py, takes over when it is collected too), and
the kernels the notebooks run on private Jupyter and IPython folders, so that running the
tests touches nothing of the user's. A notebook must also finish within ``NOTEBOOK_LIMIT_S``:
nbmake limits each cell only.

The blocks of one Markdown page run in order in one namespace, as a reader reads them: a later
block may use what an earlier one defined. pytest-markdown-docs runs each block on its own (or,
with its ``continuation`` option, re-runs all earlier blocks first), so the page runner below,
registered through the plugin's runner interface, keeps one namespace per page. Each block is
still its own test, reported with its Markdown line; a block that is not meant to run (a
signature, a sketch with undefined names) goes in a ```text block.
"""

import contextlib
import io
import os
import shutil
import tempfile
import time

import pytest

# __main__ runs the CLI when imported; the helpers under tests/ are imported by the tests that
# use them (collected as modules, the MPI checks would start MPI)
collect_ignore = ["setup.py", "gtscript/__main__.py", "docs/conf.py", "docs/_ext", "docs/_figures", "tests/mpi",
                  "tests/gt4py_corpus", "tests/cuda_emulation", "benchmarks", "examples", "build"]


#: The longest a notebook may take (the whole set runs in well under a minute).
NOTEBOOK_LIMIT_S = 60

#: Environment variables pointed at private folders while a notebook runs (its kernel inherits
#: them); only then, as an IPython shell of the test process itself keeps its history open.
_KERNEL_DIRS = {"JUPYTER_RUNTIME_DIR": "runtime", "JUPYTER_CONFIG_DIR": "config",
                "JUPYTER_DATA_DIR": "data", "IPYTHONDIR": "ipython"}


# First in, last out: tests/conftest.py, when it is loaded, then replaces the cache directory
# with its own for the suite and restores this one before this is undone.
@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    config._gtscript_root_dir = tempfile.mkdtemp(prefix="gtscript-doc-tests-")  # mode 0700
    config._gtscript_saved_cache = os.environ.get("GTSCRIPT_CACHE_DIR")
    os.environ["GTSCRIPT_CACHE_DIR"] = os.path.join(config._gtscript_root_dir, "gtscript-cache")
    os.mkdir(os.environ["GTSCRIPT_CACHE_DIR"], 0o700)  # must exist and be private


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    path = getattr(config, "_gtscript_root_dir", None)
    if path is None:
        return
    shutil.rmtree(path, ignore_errors=True)
    if config._gtscript_saved_cache is None:
        os.environ.pop("GTSCRIPT_CACHE_DIR", None)
    else:
        os.environ["GTSCRIPT_CACHE_DIR"] = config._gtscript_saved_cache


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if item.path.suffix != ".ipynb":
        return (yield)
    root = item.config._gtscript_root_dir
    saved = {var: os.environ.get(var) for var in (*_KERNEL_DIRS, "JUPYTER_PLATFORM_DIRS")}
    os.environ.update({var: os.path.join(root, sub) for var, sub in _KERNEL_DIRS.items()})
    os.environ["JUPYTER_PLATFORM_DIRS"] = "1"  # Jupyter's future folder layout, no warning
    start = time.perf_counter()
    try:
        result = yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
    elapsed = time.perf_counter() - start
    if elapsed > NOTEBOOK_LIMIT_S:
        pytest.fail(f"{item.path.name} took {elapsed:.1f} s (limit {NOTEBOOK_LIMIT_S} s)")
    return result


@pytest.fixture(autouse=True)
def _examples_in_a_temporary_directory(request, tmp_path, monkeypatch):
    """Doctests and Markdown blocks write their files into a temporary directory."""
    if request.node.get_closest_marker("markdown-docs") is not None \
            or type(request.node).__name__ == "DoctestItem":
        monkeypatch.chdir(tmp_path)
    yield


try:
    from pytest_markdown_docs._runners import DefaultRunner, register_runner
except ImportError:  # the plugin is not installed: --markdown-docs is unknown anyway
    DefaultRunner = None

if DefaultRunner is not None:

    @register_runner(default=True)
    class PageRunner(DefaultRunner):
        """Runs a block in its page's namespace (``__name__ == "__main__"``, as a script);
        what the block prints is kept and shown only when it fails."""

        namespaces: dict = {}

        def runtest(self, test, args, *, asyncio_runner=None):
            ns = self.namespaces.setdefault(str(test.source_path), {"__name__": "__main__"})
            ns.update(args)  # the fixtures the fence asks for
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    exec(compile(test.source, str(test.source_path), "exec", dont_inherit=True), ns)
            except BaseException as exc:
                exc.add_note(f"output of the block:\n{out.getvalue()}" if out.getvalue() else "")
                raise
