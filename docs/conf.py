"""Sphinx configuration of the documentation site (``make docs``; built with ``-W`` by
tests/test_docs_site.py, so a warning fails the test suite).

Sphinx with MyST: the pages stay the Markdown files of docs/ that GitHub shows and
pytest-markdown-docs runs; myst-nb renders the notebooks (docs/notebooks is a link to
notebooks/) executing them at build time; autodoc + napoleon make the API reference from the
numpy-style docstrings, whose examples pytest runs as doctests.
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# autodoc imports this checkout's gtscript (built in place), and so do the notebooks' kernels
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

import gtscript  # noqa: E402

project = "gtscript"
version = release = gtscript.__version__
author = "the gtscript developers"
copyright = "the gtscript developers"

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "cli_help"]
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

root_doc = "index"
exclude_patterns = ["_build", "_ext", "**/.ipynb_checkpoints"]

# The pages link to each other as GitHub does (``backends.md#cuda``): heading anchors as slugs.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# Notebooks are stored without outputs and executed at build time; jupyter-cache keeps the
# outputs in the build directory, so a rebuild re-runs only notebooks that changed.
# GTSCRIPT_DOCS_EXECUTE=force runs them all whatever the cache holds (the test does).
nb_execution_mode = os.environ.get("GTSCRIPT_DOCS_EXECUTE", "cache")
nb_execution_timeout = 120
nb_execution_raise_on_error = True
nb_execution_show_tb = True

autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = f"gtscript {release}"
html_theme_options = {"description": "A GTScript stencil compiler: C core, LLVM ORC JIT"}
