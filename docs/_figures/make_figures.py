"""The documentation site's figures, drawn with matplotlib (Agg) from the numbers the pages
themselves hold, so that a figure cannot say something its page does not.

- the performance tables of docs/performance.md as grouped bar charts of speed-ups (each
  chart reads its table from the page: the table stays the record, the chart its picture);
- the landing page's chart: cold build time (landing.toml beside this file, which names where
  each number was recorded) and run time (performance.md's one-thread table) of gtscript,
  GT4Py and Numba;
- diagrams: a call's origin, domain and the halo its stencil reads (calling.md), the cache's
  path (caching.md), a 2x2 decomposition with its halo bands (distributed.md).

The site's build writes them into its output folder (docs/_ext/figures.py, the
``gtscript-figure`` directive); ``python docs/_figures/make_figures.py OUTDIR`` writes them
anywhere; tests/docs/test_docs_figures.py draws each one and checks its numbers against the pages.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: the figures are files

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import patches  # noqa: E402

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
PERFORMANCE = DOCS / "performance.md"
LANDING_DATA = HERE / "landing.toml"

#: gtscript first, then the others in a fixed order and colour on every chart
COLOURS = {"gtscript": "#1f77b4", "GT4Py": "#ff7f0e", "GT4Py's best": "#ff7f0e", "C": "#7f7f7f",
           "Numba": "#2ca02c", "NumPy": "#d62728", "gtscript[cpu] F-order": "#9467bd"}


@dataclass
class Table:
    """A Markdown table of a page: the heading it is under, its header and its rows."""

    heading: str
    header: list[str]
    rows: list[list[str]]

    def column(self, name: str) -> list[str]:
        index = self.header.index(name)
        return [row[index] for row in self.rows]


def markdown_tables(path: Path) -> list[Table]:
    """Every pipe table of a Markdown page, in order, with the heading above it."""
    tables, heading, lines = [], "", path.read_text().splitlines()
    in_fence = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif not in_fence and line.startswith("|") and i + 1 < len(lines) \
                and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header = _cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            tables.append(Table(heading, header, rows))
            continue
        i += 1
    return tables


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def number(cell: str) -> float:
    """The leading number of a cell: ``1.64x``, ``4.65 (0.53)``, ``7.64 (dace)``, ``135%``."""
    match = re.match(r"-?\d+(\.\d+)?", cell.replace(",", ""))
    if match is None:
        raise ValueError(f"no number in table cell {cell!r}")
    return float(match.group())


def performance_table(heading_start: str, header_has: str, nth: int = 0) -> Table:
    """The ``nth`` table of performance.md under a heading that starts with ``heading_start``
    and whose header has the column ``header_has``."""
    found = [t for t in markdown_tables(PERFORMANCE)
             if t.heading.startswith(heading_start) and header_has in t.header]
    if len(found) <= nth:
        raise LookupError(f"performance.md has no table {nth} under {heading_start!r} "
                          f"with a column {header_has!r}")
    return found[nth]


# -- the performance tables as grouped bars of speed-ups ---------------------------------------

#: the speed-up charts: name -> (heading, a column its table has, which table under it, title)
SPEEDUP_CHARTS = {
    "speedups-gt4py-one-thread": ("Against GT4Py's compiled backends", "vs GT4Py's best", 0,
                                  "one thread (Intel Xeon guest, 2026-11-26)"),
    "speedups-gt4py-two-threads": ("Against GT4Py's compiled backends", "vs GT4Py's best", 1,
                                   "two threads (Intel Xeon guest, 2026-11-26)"),
    "speedups-results": ("Results", "vs NumPy", 0, "default threads (Intel Xeon guest, "
                         "2026-11-22)"),
}


def speedup_series(table: Table) -> dict[str, dict[str, list[float]]]:
    """dtype -> {"vs X" column's label -> speed-ups in row order}; the rows' labels are
    ``speedup_labels``. Columns of gtscript against itself (F order) are left out."""
    vs = [c for c in table.header if c.startswith("vs ") and "gtscript" not in c]
    out: dict[str, dict[str, list[float]]] = {}
    for row in table.rows:
        dtype = row[table.header.index("dtype")]
        series = out.setdefault(dtype, {c[3:]: [] for c in vs})
        for c in vs:
            series[c[3:]].append(number(row[table.header.index(c)]))
    return out


def speedup_labels(table: Table, dtype: str) -> list[str]:
    return [f"{r[table.header.index('stencil')]}\n{r[table.header.index('size')]}"
            for r in table.rows if r[table.header.index("dtype")] == dtype]


def speedup_figure(table: Table, title: str) -> plt.Figure:
    """One panel per dtype: for each stencil and size, a bar per "vs X" column (X's time over
    gtscript's: above the line at 1, gtscript is faster). Log scale when a ratio passes 10."""
    series = speedup_series(table)
    groups = max(len(speedup_labels(table, dtype)) for dtype in series)
    fig, axes = plt.subplots(len(series), 1, figsize=(max(10, 0.85 * groups), 3.4 * len(series)),
                             squeeze=False)
    for ax, (dtype, columns) in zip(axes[:, 0], series.items()):
        labels = speedup_labels(table, dtype)
        width = 0.8 / len(columns)
        for n, (name, values) in enumerate(columns.items()):
            xs = [x + (n - (len(columns) - 1) / 2) * width for x in range(len(labels))]
            ax.bar(xs, values, width, label=f"{name}'s time / gtscript's",
                   color=COLOURS.get(name), gid=f"bars:{dtype}:{name}")
        ax.axhline(1.0, color="black", linewidth=0.8)
        top = max(v for vals in columns.values() for v in vals)
        if top > 10:
            ax.set_yscale("log")
            ax.set_ylim(top=top * 4)  # room for the legend above the bars
        else:
            ax.set_ylim(0, top * 1.3)
        ax.set_xticks(range(len(labels)), labels, fontsize=7.5)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.set_ylabel("speed-up of gtscript")
        ax.set_title(f"{dtype}, {title}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, ncols=len(columns), loc="upper left")
    fig.tight_layout()
    return fig


# -- the landing page's chart -------------------------------------------------------------------

def landing_data() -> dict:
    with LANDING_DATA.open("rb") as f:
        return tomllib.load(f)


def landing_runtimes(data: dict) -> tuple[list[str], dict[str, list[float]]]:
    """The run times of the landing chart, from performance.md's table that data names."""
    spec = data["run_time"]
    table = performance_table(spec["heading"], spec["gt4py_column"], spec["table"])
    col = table.header.index
    labels, times = [], {"gtscript": [], "GT4Py's best": [], "Numba": []}
    for row in table.rows:
        if row[col("size")] != spec["size"] or row[col("dtype")] != spec["dtype"]:
            continue
        labels.append(row[col("stencil")])
        times["gtscript"].append(number(row[col(spec["gtscript_column"])]))
        times["GT4Py's best"].append(number(row[col(spec["gt4py_column"])]))
        times["Numba"].append(number(row[col(spec["numba_column"])]))
    return labels, times


def landing_figure() -> plt.Figure:
    data = landing_data()
    fig, (build, run) = plt.subplots(1, 2, figsize=(10, 3.6), width_ratios=(1, 2))
    rows = data["build"]
    names = [r["name"] for r in rows]
    ms = [r["ms"] for r in rows]
    colours = [COLOURS["gtscript"] if n.startswith("gtscript") else
               COLOURS["Numba"] if n.startswith("Numba") else COLOURS["GT4Py"] for n in names]
    bars = build.barh(names, ms, color=colours, gid="bars:build")
    build.bar_label(bars, [f"{v:,.0f} ms" if v >= 10 else f"{v:.1f} ms" for v in ms],
                    fontsize=8, padding=2)
    build.set_xscale("log")
    build.set_xlim(10, max(ms) * 30)
    build.invert_yaxis()
    build.set_xlabel("cold build, ms (log scale)")
    build.set_title(data["build_title"], fontsize=10)
    labels, times = landing_runtimes(data)
    width = 0.8 / len(times)
    for n, (name, values) in enumerate(times.items()):
        xs = [x + (n - (len(times) - 1) / 2) * width for x in range(len(labels))]
        run.bar(xs, values, width, label=name, color=COLOURS[name], gid=f"bars:run:{name}")
    run.set_xticks(range(len(labels)), labels)
    run.set_ylabel("ms per call (lower is better)")
    run.set_title(data["run_time_title"], fontsize=10)
    run.legend(fontsize=8)
    run.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


# -- diagrams -----------------------------------------------------------------------------------

def _grid_panel(ax, shape, origin, domain, extent, title, note):
    """An I-J plane of an array: its points, the domain from the origin, and the points the
    stencil reads around it (the domain grown by the extent)."""
    ni, nj = shape
    ax.add_patch(patches.Rectangle((0, 0), ni, nj, facecolor="#f2f2f2", edgecolor="black",
                                   linewidth=1.2, label="the array"))
    for i in range(ni + 1):
        ax.plot([i, i], [0, nj], color="#cccccc", linewidth=0.5)
    for j in range(nj + 1):
        ax.plot([0, ni], [j, j], color="#cccccc", linewidth=0.5)
    (lo_i, hi_i), (lo_j, hi_j) = extent
    read = patches.Rectangle((origin[0] + lo_i, origin[1] + lo_j),
                             domain[0] - lo_i + hi_i, domain[1] - lo_j + hi_j,
                             facecolor="#ffbb78", alpha=0.6, edgecolor="#ff7f0e",
                             linewidth=1.5, linestyle="--", label="halo: points read")
    ax.add_patch(read)
    ax.add_patch(patches.Rectangle(origin, domain[0], domain[1], facecolor="#aec7e8",
                                   edgecolor="#1f77b4", linewidth=2, label="domain: computed"))
    ax.plot(origin[0], origin[1], "o", color="#d62728", markersize=8, zorder=5)
    ax.annotate(f"origin {origin}", origin, xytext=(origin[0] + 0.3, origin[1] + 0.3),
                color="#d62728", fontsize=9, zorder=6)
    ax.annotate("", (origin[0] + domain[0], nj + 0.4), (origin[0], nj + 0.4),
                arrowprops={"arrowstyle": "<->", "color": "#1f77b4"}, annotation_clip=False)
    ax.text(origin[0] + domain[0] / 2, nj + 0.6, f"domain[0] = {domain[0]}", ha="center",
            color="#1f77b4", fontsize=9)
    ax.set_xlim(-2.5, ni + 1)
    ax.set_ylim(-3.4, nj + 1.5)
    ax.set_aspect("equal")
    ax.set_xlabel("I")
    ax.set_ylabel("J")
    ax.set_xticks(range(0, ni + 1, 2))
    ax.set_yticks(range(0, nj + 1, 2))
    ax.set_title(title, fontsize=10)
    ax.text(ni / 2, -1.6, note, ha="center", va="top", fontsize=8.5)


def call_grid_figure() -> plt.Figure:
    """calling.md: origin, domain and halo of a 5-point stencil (extent -1..1 in I and J) on a
    10x8 array: the default call, an explicit origin and domain, and the commonest call
    error, an origin that puts the points read outside the array."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 4.4))
    extent = ((-1, 1), (-1, 1))
    _grid_panel(axes[0], (10, 8), (1, 1), (8, 6), extent, "smooth(inp, out): the defaults",
                "origin = the halo's lower side, domain = what fits")
    _grid_panel(axes[1], (10, 8), (2, 3), (4, 4), extent,
                "origin=(2, 3, 0), domain=(4, 4, nk)", "computes out[2:6, 3:7]")
    _grid_panel(axes[2], (10, 8), (0, 0), (8, 6), extent, "origin=(0, 0, 0): ValueError",
                "inp[-1, 0, 0] at the origin is outside the array:\nthe call refuses, "
                "nothing is written")
    axes[2].add_patch(patches.Rectangle((-1, -1), 1, 8, facecolor="none", edgecolor="#d62728",
                                        hatch="////", linewidth=0))
    axes[2].add_patch(patches.Rectangle((-1, -1), 10, 1, facecolor="none", edgecolor="#d62728",
                                        hatch="////", linewidth=0))
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def _box(ax, xy, text, colour, width=2.6, height=1.0):
    ax.add_patch(patches.FancyBboxPatch((xy[0] - width / 2, xy[1] - height / 2), width, height,
                                        boxstyle="round,pad=0.08", facecolor=colour,
                                        edgecolor="#444444"))
    ax.text(xy[0], xy[1], text, ha="center", va="center", fontsize=8.5)


def _arrow(ax, start, end, text="", colour="#444444"):
    ax.annotate("", end, start, arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.3})
    if text:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.18, text, ha="center",
                fontsize=7.5, color=colour)


def cache_path_figure() -> plt.Figure:
    """caching.md: where a decorated definition finds its code, cheapest first."""
    fig, ax = plt.subplots(figsize=(12, 3.8))
    steps = [
        (1.5, "@gtscript.stencil\n(definition)", "#ffffff"),
        (5.0, "memory\nsame object: 0.1 ms\nequivalent: a few ms", "#c7e9c0"),
        (8.5, "disk index\n(pre-key -> key, tree)\n0.4-1.2 ms, no frontend", "#dadaeb"),
        (12.0, "disk entry <key>/\nchecked, loaded:\nfrontend + load", "#c6dbef"),
        (15.5, "build\nLLVM (cpu) / NVRTC (cuda)\ntens of ms and up", "#fdd0a2"),
    ]
    for x, text, colour in steps:
        _box(ax, (x, 2.0), text, colour, height=1.3)
    for (x0, *_), (x1, *_) in zip(steps, steps[1:]):
        _arrow(ax, (x0 + 1.4, 2.0), (x1 - 1.4, 2.0), "miss")
    for x, text in ((5.0, "hit"), (8.5, "hit"), (12.0, "hit"), (15.5, "stored")):
        _arrow(ax, (x, 1.3), (x, 0.45), text, colour="#2ca02c")
    ax.add_patch(patches.FancyBboxPatch((3.7, -0.15), 13.1, 0.55, boxstyle="round,pad=0.05",
                                        facecolor="#e5f5e0", edgecolor="#2ca02c"))
    ax.text(10.25, 0.12, "a stencil object: build_info['module_source'] is 'memory', 'disk' or "
            "'build'", ha="center", va="center", fontsize=8.5)
    ax.text(15.5, 3.05, "writes disk entry + index,\nkeeps it in memory", ha="center",
            fontsize=7.5, color="#8c510a")
    ax.set_xlim(0, 17.2)
    ax.set_ylim(-0.4, 3.6)
    ax.axis("off")
    fig.tight_layout()
    return fig


def decomposition_figure() -> plt.Figure:
    """distributed.md: a 40x30 grid on 2x2 ranks with halo=1: each rank's local array is its
    part of the grid plus a halo band the exchange fills from its neighbours."""
    fig, (glob, local) = plt.subplots(1, 2, figsize=(12, 4.8), width_ratios=(1, 1.1))
    ni, nj, halo = 40, 30, 1
    parts = [(0, 0, 20, 15), (20, 0, 20, 15), (0, 15, 20, 15), (20, 15, 20, 15)]
    colours = ["#aec7e8", "#98df8a", "#ffbb78", "#c5b0d5"]
    for rank, ((i0, j0, di, dj), colour) in enumerate(zip(parts, colours)):
        glob.add_patch(patches.Rectangle((i0, j0), di, dj, facecolor=colour, edgecolor="black"))
        glob.text(i0 + di / 2, j0 + dj / 2, f"rank {rank}\nowns {i0}:{i0 + di}, {j0}:{j0 + dj}",
                  ha="center", va="center", fontsize=9)
    glob.set_xlim(-2, ni + 2)
    glob.set_ylim(-2, nj + 2)
    glob.set_aspect("equal")
    glob.set_xlabel("I")
    glob.set_ylabel("J")
    glob.set_title("Decomposition((40, 30, nk), halo=1): dims (2, 2)", fontsize=10)
    # rank 0's local array, drawn larger: the halo band widened so that it can be seen
    band = 2.0
    di, dj = 20, 15
    local.add_patch(patches.Rectangle((-band, -band), di + 2 * band, dj + 2 * band,
                                      facecolor="#eeeeee", edgecolor="black", hatch="..",
                                      label="halo band (width = halo)"))
    local.add_patch(patches.Rectangle((0, 0), di, dj, facecolor=colours[0], edgecolor="black",
                                      label="interior: rank 0 computes"))
    # which neighbour fills which band (periodic: the far side wraps around)
    fills = [((di + band / 2, dj / 2), "from rank 1", colours[1]),
             ((di / 2, dj + band / 2), "from rank 2", colours[2]),
             ((di + band / 2, dj + band / 2), "3", colours[3]),
             ((-band / 2, dj / 2), "rank 1\n(periodic)", colours[1]),
             ((di / 2, -band / 2), "from rank 2 (periodic)", colours[2])]
    for (x, y), text, colour in fills:
        local.text(x, y, text, ha="center", va="center", fontsize=7.5,
                   rotation=90 if x in (di + band / 2, -band / 2) and text != "3" else 0,
                   bbox={"facecolor": colour, "edgecolor": "none", "pad": 1.5})
    local.text(di / 2, dj / 2, "dec.origin = (halo, halo, 0)\ndec.domain = (20, 15, nk)\n"
               "dec.local_shape = (22, 17, nk)", ha="center", va="center", fontsize=9)
    local.set_xlim(-band - 1, di + band + 1)
    local.set_ylim(-band - 1, dj + band + 1)
    local.set_aspect("equal")
    local.set_xticks([])
    local.set_yticks([])
    local.set_title("rank 0's local array: dec.run exchanges the bands the stencil reads",
                    fontsize=10)
    local.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncols=2, fontsize=8,
                 frameon=False)
    fig.tight_layout()
    return fig


# -- writing them -------------------------------------------------------------------------------

def _speedup(name):
    heading, column, nth, title = SPEEDUP_CHARTS[name]
    return lambda: speedup_figure(performance_table(heading, column, nth), title)


#: every figure of the site: name -> function that draws it
FIGURES = {
    "landing": landing_figure,
    **{name: _speedup(name) for name in SPEEDUP_CHARTS},
    "call-grid": call_grid_figure,
    "cache-path": cache_path_figure,
    "decomposition": decomposition_figure,
}


def write(name: str, outdir: Path) -> Path:
    """Draws one figure into ``outdir/<name>.svg`` (SVG: sharp at any zoom, its text
    searchable; no date in it, so an unchanged figure is the same file)."""
    fig = FIGURES[name]()
    path = Path(outdir) / f"{name}.svg"
    path.parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.hashsalt": "gtscript", "svg.fonttype": "none"}):
        fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
    return path


def write_all(outdir: Path) -> list[Path]:
    return [write(name, outdir) for name in FIGURES]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/_figures/make_figures.py OUTDIR")
    for written in write_all(Path(sys.argv[1])):
        print(written)
