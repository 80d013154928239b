"""Sphinx configuration of the documentation site (``make docs``; built with ``-W`` by
tests/docs/test_docs_site.py, so a warning fails the test suite).

Sphinx with MyST: the pages stay the Markdown files of docs/ that GitHub shows and
pytest-markdown-docs runs; myst-nb renders the notebooks (docs/notebooks is a link to
notebooks/) executing them at build time; autodoc + napoleon make the API reference from the
numpy-style docstrings, whose examples pytest runs as doctests.

The theme is pydata-sphinx-theme, the one NumPy, SciPy, pandas and xarray use: a reader from
the scientific Python stack finds the navigation where they expect it. Code blocks wrap
rather than scroll sideways (_static/gtscript.css; tests/docs/test_docs_browser.py measures them
at 1280 px), each has a copy button (sphinx-copybutton), the API reference links to its
source (viewcode) and to Python's and NumPy's documentation (intersphinx, from the inventories
shipped in _intersphinx/, so that the build needs no network).
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

extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode",
              "sphinx.ext.intersphinx", "sphinx_copybutton", "cli_help", "figures", "page_outputs"]
sys.path.insert(0, str(Path(__file__).parent / "_ext"))

root_doc = "index"
# pages whose python blocks run at build time, each followed by what it printed (page_outputs)
gtscript_output_pages = ["troubleshooting"]
exclude_patterns = ["_build", "_ext", "_figures", "_intersphinx", "**/.ipynb_checkpoints"]

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
# The notebooks' kernels talk to the build over CurveZMQ-encrypted TCP: jupyter_client (8.10
# and later) provisions the keys where the kernel declares support, as ipykernel 7 does, and
# ipykernel 7 prints a warning at every kernel start on unencrypted TCP. Neither myst-nb nor
# jupyter-cache passes options to the kernel manager they create, so its default is set here.
from jupyter_client.manager import KernelManager  # noqa: E402

if "transport_encryption" in KernelManager.class_trait_names():
    KernelManager.transport_encryption.default_value = "auto"

autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

# Python's and NumPy's object inventories: read from _intersphinx/ (Python's is the one
# Debian's python3.11-doc ships), so the build is the same offline; an inventory that is not
# there is fetched only when GTSCRIPT_DOCS_INTERSPHINX=online (a fetch that fails would be a
# warning, and -W makes it an error), else its links stay plain code.
_INVENTORIES = {"python": "https://docs.python.org/3.11/", "numpy": "https://numpy.org/doc/stable/"}
intersphinx_mapping = {}
for _name, _url in _INVENTORIES.items():
    _local = Path(__file__).parent / "_intersphinx" / f"{_name}.inv"
    if _local.is_file():
        intersphinx_mapping[_name] = (_url, str(_local))
    elif os.environ.get("GTSCRIPT_DOCS_INTERSPHINX") == "online":
        intersphinx_mapping[_name] = (_url, None)

# the prompt and output of console blocks are not copied, only the commands
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

html_theme = "pydata_sphinx_theme"
html_title = f"gtscript {release}"
html_static_path = ["_static"]
html_css_files = ["gtscript.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 4,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_context = {"default_mode": "light"}
# every page is a top-level entry of the navigation bar: a left sidebar would be empty, and
# the text gets its width instead
html_sidebars = {"**": []}
