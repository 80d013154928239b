"""The documentation site builds without a warning (``sphinx -W``), as ``make docs`` builds it:
the pages of docs/, the notebooks executed at build time and rendered with their outputs, the
API reference from the docstrings and the CLI's help from its argument parser, the theme and
its figures.

The build (tests/docs_site.py) runs once per session in a subprocess into a temporary folder,
with private Jupyter, IPython and gtscript cache folders, so it touches nothing of the user's
or of the checkout; tests/docs/test_docs_browser.py looks at the same build in a browser.
"""

import html
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytest.importorskip("sphinx", reason="the docs extra (pip install -e '.[docs]') is not installed")
pytest.importorskip("myst_nb", reason="the docs extra (pip install -e '.[docs]') is not installed")


@pytest.fixture(scope="module")
def site(docs_site):
    """The site, built once per session (tests/conftest.py, tests/docs_site.py)."""
    return docs_site


def test_every_page_is_in_the_site(site):
    pages = {p.stem for p in DOCS.glob("*.md")}
    built = {p.stem for p in site.glob("*.html")}
    assert pages <= built, f"pages not built: {pages - built}"
    assert {p.stem for p in NOTEBOOKS} == {p.stem for p in (site / "notebooks").glob("*.html")}


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_rendered_with_their_outputs(site, notebook):
    text = (site / "notebooks" / f"{notebook.stem}.html").read_text()
    # the stored notebooks have no outputs: these come from running them at build time
    assert text.count('class="cell_output') >= 1, f"{notebook.name}: no cell output in the site"
    assert "Traceback (most recent call last)" not in text or notebook.stem == "05-errors"
    if '"plt.show()' in notebook.read_text():  # matplotlib figures are in the page as images
        assert re.search(r'<img[^>]+src="[^"]*_images/', text), f"{notebook.name}: no figure"


def test_api_reference_is_generated_from_the_docstrings(site):
    text = (site / "api.html").read_text()
    for name in ("gtscript.stencil", "gtscript.lazy_stencil", "gtscript.function",
                 "gtscript.stencil.Stencil", "gtscript.info.FieldInfo",
                 "gtscript.storage.zeros", "gtscript.storage.from_array", "gtscript.cache.info",
                 "gtscript.distributed.Decomposition"):
        assert f'id="{name}"' in text, f"{name} is not in the API reference"
    for member in ("field_info", "ir", "source"):
        assert f'id="gtscript.stencil.Stencil.{member}"' in text
    # the call's options are documented on the stencil object
    for option in ("origin", "domain", "validate_args", "exec_info"):
        assert re.search(rf"<strong>{option}</strong>", text), f"call option {option} undocumented"


def test_cli_page_shows_the_parsers_help(site):
    from gtscript.cli import build_parser

    text = (site / "cli.html").read_text()
    assert "usage: python -m gtscript" in text
    for command in build_parser()._subparsers._group_actions[0].choices:
        assert f"usage: python -m gtscript {command}" in text


def test_pages_have_the_theme_copy_buttons_source_links_and_intersphinx(site):
    api = (site / "api.html").read_text()
    for page in ("index", "getting-started", "api", "notebooks/01-quickstart"):
        text = (site / f"{page}.html").read_text()
        assert 'class="bd-article' in text, f"{page}: not the pydata-sphinx-theme layout"
        assert re.search(r'<script src="(\.\./)?_static/copybutton\.js', text), f"{page}: no copy buttons"
        assert re.search(r'<link [^>]*href="(\.\./)?_static/gtscript\.css', text), f"{page}: no wrapping CSS"
    # [source] links to the highlighted module sources (viewcode), and Python's objects link to
    # its documentation through the inventory shipped in docs/_intersphinx (no network)
    assert api.count('class="viewcode-link"') >= 10
    assert (site / "_modules" / "gtscript" / "stencil.html").is_file()
    assert 'href="https://docs.python.org/3.11/library/' in api


def test_the_figures_are_drawn_into_the_site(site):
    shown = set()
    for page in site.rglob("*.html"):
        for src in re.findall(r'<img src="([^"]+)"[^>]*class="gtscript-figure"', page.read_text()):
            assert (page.parent / src).resolve().is_file(), f"{page.name}: {src} was not drawn"
            shown.add(Path(src).stem)
    assert {"landing", "call-grid", "cache-path", "decomposition"} <= shown
    assert len([s for s in shown if s.startswith("speedups-")]) == 3


def test_the_landing_page_shows_code_and_the_chart_not_a_wall_of_links(site):
    text = (site / "index.html").read_text()
    article = text[text.index("<article"):text.index("</article>")]
    assert re.search(r'<div class="highlight-python[^"]*"', article), "no example on the landing page"
    assert "gtscript</span><span class=\"o\">.</span><span class=\"n\">stencil" in article
    assert 'src="_figures/landing.svg"' in article
    assert len(re.findall(r"<a ", article)) < 30, "the landing page is a list of links again"


def _printed(page_html):
    """The text of the outputs the site's build put under a page's examples (page_outputs)."""
    blocks = re.findall(r'class="[^"]*gtscript-output[^"]*".*?<pre>(.*?)</pre>', page_html, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", b)) for b in blocks]


def test_troubleshooting_prints_the_messages_its_table_quotes(site):
    printed = "\n".join(_printed((site / "troubleshooting.html").read_text()))
    # build errors as Python shows them: the page's own file and line, and a caret
    assert re.search(r'File "docs/troubleshooting\.md", line \d+, column \d+\n.*\n\s*\^', printed)
    assert "GTScriptSemanticError: shifted self-assignment" in printed
    # every message the call-error table quotes is one the examples printed in this build
    # ("..." stands for any text, 'x' for an argument's name, N for a number), but for the
    # rows that need an xarray or dask object, a defaulted scalar or __gt_dims__
    page = (DOCS / "troubleshooting.md").read_text()
    table = page[page.index("## Call errors"):page.index("## Results that look wrong")]
    quoted = [q for row in re.findall(r"^\| (`.*?`) \|", table, re.M)
              for q in re.findall(r"`([^`]+)`", row)]
    not_run = ("cannot view it without a copy", "sees its memory as read-only",
               "returns new memory", "put dimension", "its default, None", "__gt_dims__")
    assert len(quoted) >= 18
    missing = []
    for q in quoted:
        if any(part in q for part in not_run):
            continue
        pattern = ".*?".join(re.escape(part.strip()) for part in q.split("..."))
        pattern = pattern.replace("'x'", r"'\w+'").replace(r"\.\.N", r"\.\.\d+")
        pattern = pattern.replace(r"pass\ x\.", r"pass\ \w+\.")  # pass x.astype(...)
        pattern = re.sub(r"size\\? N", r"size \\d+", pattern)
        if not re.search(pattern, printed):
            missing.append(q)
    assert not missing, f"quoted on the page but not what gtscript prints: {missing}"
    assert sum(any(part in q for part in not_run) for q in quoted) == len(not_run)


def test_the_errors_notebook_shows_each_tagged_cells_traceback(site):
    import nbformat

    book = nbformat.read(ROOT / "notebooks" / "05-errors.ipynb", as_version=4)
    tagged = [c for c in book.cells if "raises-exception" in c.metadata.get("tags", [])]
    text = (site / "notebooks" / "05-errors.html").read_text()
    assert text.count('class="output traceback') == len(tagged) >= 20


def test_performance_notebook_has_its_numba_bar(site):
    # numba is in the docs and test extras, so the published notebook compares with it
    text = (site / "notebooks" / "04-performance.html").read_text()
    assert "Numba: yes" in text, "the performance notebook ran without Numba"
