"""Format a suite report (benchmarks/suite.py): a Markdown table and a PNG bar chart."""

LABELS = {"numpy": "NumPy", "numba": "Numba", "c": "C"}
#: The stencils whose targets include a share of the STREAM bandwidth.
MEMORY_BOUND = ("copy", "laplacian", "hdiff")
#: The performance targets: cases on grids of at least this many points count.
TARGET_MIN_POINTS = 256 * 256 * 80


def _label(column, primary):
    if column == primary:
        return "gtscript"
    if column.startswith("gt4py["):
        return "GT4Py " + column[len("gt4py["):-1]
    return LABELS.get(column, column)


def _columns(report):
    """Timed columns in a fixed order: gtscript backends, then NumPy, Numba, C."""
    seen = []
    for r in report["results"]:
        for column in r["timings"]:
            if column not in seen:
                seen.append(column)
    order = [c for c in seen if c.startswith("gtscript")] + [c for c in ("numpy", "numba", "c")
                                                            if c in seen]
    return order + [c for c in seen if c.startswith("gt4py[")]


def markdown_table(report):
    """The results as a Markdown table (times are medians in ms; "vs X" = X's time over
    gtscript's, > 1 when gtscript is faster)."""
    primary, columns = report["primary"], _columns(report)
    others = [c for c in columns if c != primary]
    head = ["stencil", "size", "dtype", "gtscript ms", "GB/s", "% STREAM"]
    head += [f"{_label(c, primary)} ms" for c in others]
    if "c" in columns:
        head.append("C GB/s")
    head += [f"vs {_label(c, primary)}" for c in others]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] * 3 + ["---:"] * (len(head) - 3)) + "|"]
    for r in report["results"]:
        t = r["timings"]
        cells = [r["stencil"], r["size"], r["dtype"], f"{t[primary]['ms']:.3f}",
                 f"{t[primary]['gb_s']:.1f}",
                 "-" if r["stream_fraction"] is None else f"{100 * r['stream_fraction']:.0f}%"]
        cells += [f"{t[c]['ms']:.3f}" if c in t else "-" for c in others]
        if "c" in columns:
            cells.append(f"{t['c']['gb_s']:.1f}" if "c" in t else "-")
        cells += [f"{r['speedup_vs'][c]:.2f}x" if c in r["speedup_vs"] else "-" for c in others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(report):
    """Everything the command line prints: header, table, STREAM, call overhead, builds."""
    m = report["machine"]
    out = [f"# {report['date_utc']}: {m['cpu_model']}, {m['usable_cores']} usable cores, "
           f"NumPy {m['numpy_version']}, Numba {m.get('numba_version', 'not installed')}, "
           f"{m['compiler'] or 'no C compiler'}; gtscript extension built "
           f"{m['gtscript_core_built']}",
           f"# median of up to {report['repeat']} calls after a warm-up (at most "
           f"{report['max_seconds']:g} s per measurement); 'vs X' = X's time / gtscript's time",
           _load_line(report), ""]
    out.append(markdown_table(report))
    out.append("")
    stream = report["stream"]
    if stream:
        out.append(f"STREAM-style copy (C, OpenMP, {stream['array_mib']:.0f} MiB arrays): "
                   f"{stream['gb_s']:.1f} GB/s, the better of {stream['start']['gb_s']:.1f} "
                   f"at the start and {stream['end']['gb_s']:.1f} at the end")
    overhead = report.get("call_overhead")
    if overhead:
        out.append(f"call overhead (8x8x8 copy, validate_args on, {overhead['calls']} calls): "
                   f"{overhead['gtscript_us']:.2f} us per call (np.copyto: "
                   f"{overhead['numpy_copyto_us']:.2f} us); RSS growth over those calls: "
                   f"{overhead['rss_growth_bytes']} bytes")
    out += targets(report)
    for note in report["notes"]:
        out.append(f"note: {note}")
    if report["build_s"]:
        out.append("cold builds (rebuild=True): " + ", ".join(
            f"{k} {1e3 * v:.0f} ms" for k, v in report["build_s"].items()))
    return "\n".join(out)


def _points(size):
    ni, nj, nk = (int(n) for n in size.split("x"))
    return ni * nj * nk


def targets(report):
    """One line per performance target: how many cases meet it, and the ones that miss."""
    big = [r for r in report["results"] if _points(r["size"]) >= TARGET_MIN_POINTS]
    checks = [("vs C >= 0.9x", big, lambda r: r["speedup_vs"].get("c"), 0.9, "{:.2f}x"),
              ("vs Numba >= 1.5x", big, lambda r: r["speedup_vs"].get("numba"), 1.5, "{:.2f}x"),
              ("hdiff vs NumPy >= 10x", [r for r in big if r["stencil"] == "hdiff"],
               lambda r: r["speedup_vs"].get("numpy"), 10.0, "{:.1f}x"),
              (f"{'/'.join(MEMORY_BOUND)} >= 80% of STREAM",
               [r for r in big if r["stencil"] in MEMORY_BOUND],
               lambda r: r["stream_fraction"] and 100 * r["stream_fraction"], 80.0, "{:.0f}%")]
    def best_gt4py(r):
        ratios = [v for c, v in r["speedup_vs"].items() if c.startswith("gt4py[")]
        return min(ratios) if ratios else None

    def c_over_f(r):  # the F-order time over the C-order time: C within 10% of F is >= 1/1.1
        ratios = [v for c, v in r["speedup_vs"].items() if c.endswith("F-order")]
        return ratios[0] if ratios else None

    checks += [("vs GT4Py's best >= 1.2x", big, best_gt4py, 1.2, "{:.2f}x"),
               ("C order within 10% of F order (F time / C time >= 0.91)", big, c_over_f,
                1 / 1.1, "{:.2f}")]
    lines = []
    for label, cases, value, bound, fmt in checks:
        measured = [(r, value(r)) for r in cases if value(r) is not None]
        if not measured:
            continue
        missed = [f"{r['stencil']} {r['size']} {r['dtype']} {fmt.format(v)}"
                  for r, v in measured if v < bound]
        lines.append(f"target {label} (grids >= 256x256x80): {len(measured) - len(missed)}/"
                     f"{len(measured)} met" + (f"; missed: {', '.join(missed)}" if missed else ""))
    overhead = report.get("call_overhead")
    if overhead:
        # "no growth": under a byte per call (RSS moves in pages, and not only for our calls)
        grows = overhead["rss_growth_bytes"] >= overhead["calls"]
        lines.append(f"target call overhead < 5 us: {overhead['gtscript_us']:.2f} us "
                     f"({'met' if overhead['gtscript_us'] < 5 else 'missed'}); no memory growth "
                     f"over {overhead['calls']} calls: {overhead['rss_growth_bytes']} bytes "
                     f"({'missed' if grows else 'met'})")
    return lines


def _load_line(report):
    def fmt(values):
        return "n/a" if values is None else " ".join(f"{v:.1f}" for v in values)
    load = report["load_average"]
    return (f"# load average (1/5/15 min): {fmt(load['start'])} at the start, "
            f"{fmt(load.get('end'))} at the end, on {report['machine']['usable_cores']} cores "
            f"(a load above the core count means other work shared the machine: noisy timings)")


def plot(report, path):
    """A PNG bar chart of GB/s per implementation, one panel per (size, dtype), STREAM dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    primary, columns = report["primary"], _columns(report)
    groups = []
    for r in report["results"]:
        if (r["size"], r["dtype"]) not in groups:
            groups.append((r["size"], r["dtype"]))
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 3.2 * len(groups)), squeeze=False)
    width = 0.8 / len(columns)
    for ax, (size, dtype) in zip(axes[:, 0], groups):
        rows = [r for r in report["results"] if (r["size"], r["dtype"]) == (size, dtype)]
        for n, column in enumerate(columns):
            values = [r["timings"][column]["gb_s"] if column in r["timings"] else 0.0
                      for r in rows]
            ax.bar([i + n * width for i in range(len(rows))], values, width,
                   label=_label(column, primary))
        if report["stream"]:
            ax.axhline(report["stream"]["gb_s"], color="black", linestyle="--", linewidth=1,
                       label="STREAM copy")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
        ax.set_xticklabels([r["stencil"] for r in rows])
        ax.set_yscale("log")
        ax.set_ylabel("GB/s (moved once)")
        ax.set_title(f"{size} {dtype}")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
