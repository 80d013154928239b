"""The documentation site's figures (docs/_figures/make_figures.py): each one draws, and each
chart shows the numbers its page records (the site's build draws them the same way, through
docs/_ext/figures.py; tests/docs/test_docs_browser.py checks that the built pages show them)."""

import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def figures():
    name = "gtscript_docs_make_figures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DOCS / "_figures" / "make_figures.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _bars(fig, prefix):
    """gid -> heights (widths for horizontal bars) of the bars drawn with that gid, in order."""
    out = {}
    for ax in fig.axes:
        for patch in ax.patches:
            gid = patch.get_gid() or ""
            if gid.startswith(prefix):
                out.setdefault(gid, []).append(patch.get_height() if "build" not in gid
                                               else patch.get_width())
    return out


def _rows(page, first_cells):
    """The cells of a page's table rows that begin with ``first_cells`` (split here by hand,
    independently of the figure script's parser)."""
    rows = []
    for line in (DOCS / page).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[:len(first_cells)] == list(first_cells):
            rows.append(cells)
    return rows


def test_the_performance_tables_are_found(figures):
    one = figures.performance_table("Against GT4Py's compiled backends", "vs GT4Py's best", 0)
    two = figures.performance_table("Against GT4Py's compiled backends", "vs GT4Py's best", 1)
    assert len(one.rows) == len(two.rows) == 20
    assert one.rows[0][:3] == ["copy", "256x256x80", "float64"] and one.rows != two.rows
    with pytest.raises(LookupError):
        figures.performance_table("Against GT4Py's compiled backends", "vs GT4Py's best", 2)
    assert figures.number("7.64 (dace)") == 7.64 and figures.number("1.64x") == 1.64
    with pytest.raises(ValueError):
        figures.number("-")


@pytest.mark.parametrize("name", ["speedups-gt4py-one-thread", "speedups-gt4py-two-threads",
                                  "speedups-results"])
def test_speedup_bars_are_the_tables_numbers(figures, name):
    heading, column, nth, _ = figures.SPEEDUP_CHARTS[name]
    table = figures.performance_table(heading, column, nth)
    fig = figures.FIGURES[name]()
    bars = _bars(fig, "bars:")
    vs = [c for c in table.header if c.startswith("vs ") and "gtscript" not in c]
    assert vs and len(bars) == 2 * len(vs)  # float64 and float32 panels
    for dtype in ("float64", "float32"):
        for c in vs:
            index = table.header.index(c)
            # the rows of this dtype, re-read from the page's text
            expected = []
            for row in table.rows:
                if row[2] == dtype:
                    line = _rows("performance.md", row[:4])
                    assert line, row[:4]
                    expected.append(float(line[0][index].rstrip("x")))
            assert bars[f"bars:{dtype}:{c[3:]}"] == pytest.approx(expected), (dtype, c)
    figures.plt.close(fig)


def test_the_landing_chart_shows_recorded_numbers(figures):
    data = figures.landing_data()
    # every build time is quoted, as written, on the page the data file names
    for row in data["build"]:
        text = (DOCS / row["page"]).read_text()
        assert row["cell"] in text, f"{row['name']}: {row['cell']!r} is not in {row['page']}"
        assert str(row["ms"]) in row["cell"]
    fig = figures.landing_figure()
    bars = _bars(fig, "bars:")
    assert bars["bars:build"] == [row["ms"] for row in data["build"]]
    assert {r["name"].split()[0] for r in data["build"]} == {"gtscript", "Numba", "GT4Py"}
    # the run times are the one-thread table's, re-read from the page
    rows = _rows("performance.md", ())
    expected = {}
    for cells in rows:
        if cells[1:3] == ["256x256x80", "float64"] and len(cells) == 13 and "(" in cells[3]:
            expected.setdefault(cells[0], cells)  # the first such table is the one-thread one
    labels, _ = figures.landing_runtimes(data)
    assert labels == ["copy", "laplacian", "hdiff", "thomas", "advection"]
    for name, column in (("gtscript", 3), ("GT4Py's best", 6), ("Numba", 10)):
        assert bars[f"bars:run:{name}"] == pytest.approx(
            [float(expected[s][column].split()[0]) for s in labels]), name
    figures.plt.close(fig)


def test_every_figure_is_written_as_svg_and_used_by_a_page(figures, tmp_path):
    written = figures.write_all(tmp_path / "a")
    assert {p.stem for p in written} == set(figures.FIGURES)
    for path in written:
        root = ET.parse(path).getroot()
        assert root.tag.endswith("svg") and float(root.get("width").rstrip("pt")) > 100, path.name
        assert len(path.read_bytes()) > 5000, path.name
    # no date or random id in the file: drawing it again gives the same bytes
    again = figures.write("cache-path", tmp_path / "b")
    assert again.read_bytes() == (tmp_path / "a" / "cache-path.svg").read_bytes()
    used = set()
    for page in DOCS.glob("*.md"):
        used |= set(re.findall(r"^```\{gtscript-figure\} (\S+)$", page.read_text(), re.M))
    assert used == set(figures.FIGURES), "figures drawn but not shown, or shown but not drawn"
