"""Every notebook in notebooks/ runs top to bottom on a fresh kernel without an error.

The kernel is this interpreter (``sys.executable``) running ipykernel, found through a
kernelspec written into a temporary folder; Jupyter's and IPython's own folders are pointed
at temporary ones too, so running the tests touches no configuration of the user's.
Notebooks are stored without outputs; that is checked as well.
"""

import json
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: Per-cell limit; the whole set runs in well under a minute.
CELL_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """A private Jupyter setup: a ``python3`` kernelspec for this interpreter and private
    runtime/config/data/IPython folders (restored after the module)."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (gtscript tests)",
        "language": "python",
    }))
    mp = pytest.MonkeyPatch()
    for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTER_DATA_DIR", "data"), ("IPYTHONDIR", "ipython"),
                     ("GTSCRIPT_CACHE_DIR", "gtscript-cache")):
        mp.setenv(var, str(root / sub))
    mp.setenv("JUPYTER_PLATFORM_DIRS", "1")
    mp.delenv("MPLBACKEND", raising=False)   # the kernel's own (inline, Agg-based) backend
    yield root / "kernels"
    mp.undo()


def test_there_are_notebooks():
    names = [p.name for p in NOTEBOOKS]
    assert names == ["01-quickstart.ipynb", "02-diffusion.ipynb", "03-vertical-solver.ipynb",
                     "04-performance.ipynb", "05-errors.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    for cell in book.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: a code cell was saved with its outputs; clear them")
    assert book.metadata.kernelspec.name == "python3"
    for cell in book.cells:
        if cell.cell_type == "markdown":
            for target in re.findall(r"\[[^\]]*\]\(([^)\s#]+)[^)]*\)", cell.source):
                if not re.match(r"[a-z]+:", target):
                    assert (path.parent / target).exists(), f"{path.name}: link to missing {target}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, kernel_env):
    book = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernel_env)]))
    assert km.kernel_spec.argv[0] == sys.executable
    client = NotebookClient(book, km=km, timeout=CELL_TIMEOUT_S, allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    # raises CellExecutionError, with the cell and its traceback, on error; the kernel
    # manager is ours, so ask for the kernel to be shut down and its channels closed
    client.execute(cleanup_kc=True)
    elapsed = time.perf_counter() - start
    errors = [out for cell in book.cells if cell.cell_type == "code"
              for out in cell.outputs if out.output_type == "error"]
    assert not errors
    assert elapsed < 60, f"{path.name} took {elapsed:.1f} s"
    assert not km.has_kernel
