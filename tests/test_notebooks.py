"""The notebooks in notebooks/: the set, and how they are stored.

Running them is nbmake's job (``--nbmake`` in pyproject's addopts, notebooks/ in its testpaths):
each notebook runs top to bottom on a fresh kernel of this interpreter, in its own folder, with
private Jupyter, IPython and gtscript cache folders and a time limit (see conftest.py);
tests/test_docs.py checks that every notebook is collected that way. What nbmake does not check
is here: that the notebooks are stored without outputs (the site renders the outputs of its
own run, docs/conf.py) and that their links point at files that exist.
"""

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


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
