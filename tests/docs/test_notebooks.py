"""The notebooks in notebooks/: the set, and how they are stored.

Running them is nbmake's job (``--nbmake`` in pyproject's addopts, notebooks/ in its testpaths):
each notebook runs top to bottom on a fresh kernel of this interpreter, in its own folder, with
private Jupyter, IPython and gtscript cache folders and a time limit (see conftest.py);
tests/docs/test_docs.py checks that every notebook is collected that way. What nbmake does not check
is here: that the notebooks are stored without outputs (the site renders the outputs of its
own run, docs/conf.py) and that their links point at files that exist.
"""

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


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


def test_the_errors_notebook_shows_real_tracebacks():
    """Its mistakes raise in their own cells, as they would for a reader (tagged
    ``raises-exception``), not inside a helper that catches and prints them."""
    book = nbformat.read(NOTEBOOKS[-1], as_version=4)
    assert NOTEBOOKS[-1].name == "05-errors.ipynb"
    tagged = [c for c in book.cells if "raises-exception" in c.metadata.get("tags", [])]
    assert len(tagged) >= 20
    for cell in tagged:
        assert cell.cell_type == "code" and "try:" not in cell.source and "except" not in cell.source


def _run_with_nbmake(tmp_path, cells):
    """A notebook of these (source, tags) cells, run by nbmake's runner as ``--nbmake`` runs
    the notebooks; returns its error (None when the run passed)."""
    from nbmake.nb_run import NotebookRun

    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src, metadata={"tags": tags})
                                           for src, tags in cells])
    book.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(book, path)
    return NotebookRun(path, 60).execute().error


def test_the_notebook_runner_accepts_tagged_errors_and_fails_on_others(tmp_path, monkeypatch):
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    expected = _run_with_nbmake(tmp_path, [("raise ValueError('shown')", ["raises-exception"]),
                                           ("print('the run goes on')", [])])
    assert expected is None
    unexpected = _run_with_nbmake(tmp_path, [("raise ValueError('not expected')", []),
                                             ("print('never runs')", [])])
    assert unexpected is not None and "not expected" in unexpected.trace
