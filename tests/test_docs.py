"""Every ```python block of docs/*.md and README.md runs, so the documentation cannot rot.

The blocks of one Markdown file run in order in one namespace (a later block may use what
an earlier one defined), in a temporary working directory.  They are written to a Python
file in which every line of a block keeps its line number in the Markdown file and every
other line is blank: ``inspect`` finds the stencils' source, and a failure's traceback
and gtscript's error messages give the Markdown line.

A snippet that is not meant to run (a signature, a sketch with undefined names) goes in a
```text block instead.
"""

import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARKDOWN = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
#: Pages that must keep runnable examples (the others may be prose and diagrams only).
MUST_HAVE_EXAMPLES = {"README.md", "getting-started.md", "language.md", "calling.md",
                      "backends.md", "troubleshooting.md"}

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")


def python_lines(text: str) -> list[str]:
    """The lines of ``text`` with everything outside ```python blocks blanked."""
    out, fence, indent, keep = [], None, "", False
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence, indent = match.group(2), match.group(1)
            keep = match.group(3).lower() in ("python", "py")
            out.append("")
        elif fence is not None and line.strip().startswith(fence) and not line.strip()[len(fence):].strip():
            fence, keep = None, False
            out.append("")
        elif keep:
            out.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
        else:
            out.append("")
    assert fence is None, "a code fence is not closed"
    return out


def test_the_extractor_keeps_line_numbers():
    text = "intro\n```python\nx = 1\n```\n\n```bash\nls\n```\n~~~py\ny = x + 1\n~~~\n"
    assert python_lines(text) == ["", "", "x = 1", "", "", "", "", "", "", "y = x + 1", ""]


def test_required_pages_have_examples():
    found = {p.name for p in MARKDOWN if any(python_lines(p.read_text()))}
    assert MUST_HAVE_EXAMPLES <= found, f"pages without python examples: {MUST_HAVE_EXAMPLES - found}"


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_python_blocks_run(page, tmp_path, monkeypatch):
    lines = python_lines(page.read_text())
    if not any(line.strip() for line in lines):
        return  # prose only
    script = tmp_path / f"{page.stem}_md.py"
    script.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown text."""
    anchors = set()
    for line in python_free_lines(text):
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


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
