"""The Markdown pages (docs/*.md, README.md) and what runs their examples.

Running the ```python blocks is pytest-markdown-docs' job (``--markdown-docs`` in pyproject's
addopts, docs/ and README.md in its testpaths): the blocks of one page run in order in one
namespace, in a temporary directory (the page runner in conftest.py). Here: that the plugin,
nbmake and the doctests are wired in and collect every block, notebook and docstring example;
that the pages that must show runnable examples have them; and what the plugin does not
check, that relative links point at files and headings that exist.

A snippet that is not meant to run (a signature, a sketch with undefined names) goes in a
```text block.
"""

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
#: Pages that must keep runnable examples (the others may be prose and diagrams only).
MUST_HAVE_EXAMPLES = {"README.md", "getting-started.md", "language.md", "calling.md",
                      "backends.md", "troubleshooting.md", "profiling.md", "model.md"}
#: Modules whose docstrings' examples the API reference shows (docs/api.md).
DOCTEST_MODULES = ("gtscript/stencil.py", "gtscript/info.py", "gtscript/storage.py",
                   "gtscript/cache.py")


def python_blocks(text: str) -> list:
    """The fences pytest-markdown-docs runs: CommonMark fences whose info string starts with
    ``py``, ``python`` or ``python3``."""
    return [t for t in MarkdownIt("commonmark").parse(text)
            if t.type == "fence" and t.info.split()[:1] in (["py"], ["python"], ["python3"])]


def test_required_pages_have_examples():
    found = {p.name for p in MARKDOWN if python_blocks(p.read_text())}
    assert MUST_HAVE_EXAMPLES <= found, f"pages without python examples: {MUST_HAVE_EXAMPLES - found}"


@pytest.fixture(scope="module")
def collected():
    """The node ids the suite's own configuration collects outside tests/."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "docs", "README.md", "notebooks", *DOCTEST_MODULES],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line for line in proc.stdout.splitlines() if "::" in line]


def test_every_python_block_is_run_by_the_markdown_plugin(collected):
    per_page = Counter(node.split("::")[0] for node in collected)
    for page in MARKDOWN:
        expected = len(python_blocks(page.read_text()))
        assert per_page[str(page.relative_to(ROOT))] == expected, page.name


def test_every_notebook_is_run_by_nbmake(collected):
    assert {f"notebooks/{p.name}::" for p in NOTEBOOKS} <= {n.split("::")[0] + "::" for n in collected}


def test_the_docstrings_examples_are_run(collected):
    for module in DOCTEST_MODULES:
        assert any(n.startswith(f"{module}::") for n in collected), f"no doctest in {module}"
    assert "gtscript/stencil.py::gtscript.stencil.Stencil" in collected


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown text."""
    anchors = set()
    for line in python_free_lines(text):
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")


def python_free_lines(text: str) -> list[str]:
    """The lines of ``text`` outside code fences (a ``# comment`` is not a heading)."""
    out, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(2)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            out.append(line)
    return out


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_existing_files_and_headings(page):
    text = "\n".join(python_free_lines(page.read_text()))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f"{page.name}: link to missing {target}"
        if anchor and file.suffix == ".md":
            assert anchor in heading_anchors(file.read_text()), f"{page.name}: no heading #{anchor} in {file.name}"
