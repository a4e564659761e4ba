#!/usr/bin/env python3
"""The report's plot hints on committed H100 series (tests/report/inputs/h100/raw), with the
plots.json the shipped TMA and DSMEM probes declare: legends and panel titles must name the
columns' values ("cp.async.bulk", "one SM") where the series hold codes, a lines hint's axes must
replace the report's choice, and a panel whose rows repeat an (x, group) pair must join the best
of each x. Usage: check_plot_hints.py SOURCE_DIR. Exit 77 (skipped) without matplotlib."""

import json
import os
import shutil
import sys
import tempfile

from need_module import need  # noqa: E402

need("matplotlib")

source = sys.argv[1]
sys.path.insert(0, os.path.join(source, "host", "report"))
import plot_generic  # noqa: E402
import plot_hints  # noqa: E402
import plot_special  # noqa: E402
import series as series_mod  # noqa: E402
import topology  # noqa: E402

INPUT = os.path.join(source, "tests", "report", "inputs", "h100")
# What the host writes from the shipped probes' declarations (plugins/hopper-*/plugin.cpp).
HINTS = {
    "hopper-tma__latency": {"series": "latency", "kind": "lines", "x": "bytes", "y": "cycles", "group": "series",
                            "labels": "series=cp.async.bulk from L2,cp.async.bulk from DRAM,"
                                      "tensor tile from L2,tensor tile from DRAM"},
    "hopper-tma__throughput": {"series": "throughput", "kind": "panels", "x": "bytes_per_transfer", "y": "gbps",
                               "group": "method", "panel": "scope",
                               "labels": "scope=one SM,every SM;"
                                         "method=cp.async.bulk,cp.async 16 B (LDGSTS),ld.global + st.shared"},
    "hopper-dsmem__bandwidth": {"series": "sweeps", "kind": "panels", "x": "cluster_blocks", "y": "median_gbps",
                                "group": "source", "panel": "width_bytes",
                                "labels": "source=another block of the cluster,the block's own shared memory,"
                                          "global memory via L2"},
}
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


def legend_texts(fig):
    texts = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    for ax in fig.axes:
        if ax.get_legend():
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return texts


# The label syntax itself.
h = plot_hints.Hint(labels="scope=one SM,every SM;method=a,b")
check(plot_hints.column_labels(h) == {"scope": ["one SM", "every SM"], "method": ["a", "b"]}, "column_labels")
check(plot_hints.value_name(h, "method", 1.0) == "b", "value_name of method 1")
check(plot_hints.value_name(h, "method", 2.0) is None, "value_name past the list")
check(plot_hints.column_labels(plot_hints.Hint(labels="a,b,c")) == {}, "a plain list is no column list")
check(plot_hints.labels(plot_hints.Hint(labels="a,b"), None, 3) == ["a", "b", "2"], "plain labels")

topo = topology.load(os.path.join(INPUT, "topology.toml"))
with tempfile.TemporaryDirectory() as raw:
    for folder, hint in HINTS.items():
        os.makedirs(os.path.join(raw, folder))
        name = hint["series"] + ".csv"
        shutil.copy(os.path.join(INPUT, "raw", folder, name), os.path.join(raw, folder, name))
        with open(os.path.join(raw, folder, "plots.json"), "w") as f:
            json.dump({"probe": folder.replace("__", "/"), "plots": [hint]}, f)
    found = {s.folder: s for s in series_mod.discover(raw)}

    latency = found["hopper-tma__latency"]
    check(plot_special.special_plot(latency) is None, "a lines hint is drawn by the generic plot")
    lay = plot_generic.layout(latency, plot_hints.hint_for(latency))
    check((lay.x, lay.ys, lay.group) == ("bytes", ["cycles"], ("series",)), f"lines hint axes: {lay}")
    fig, _ = plot_generic.plot(latency, topo)
    texts = legend_texts(fig)
    for want in ("cp.async.bulk from L2", "tensor tile from DRAM"):
        check(want in texts, f"TMA latency legend lacks {want!r}: {texts}")
    check(not any(t.startswith("series ") for t in texts), f"TMA latency legend shows codes: {texts}")

    tput = found["hopper-tma__throughput"]
    draw = plot_special.special_plot(tput)
    check(draw is not None, "the TMA throughput panels hint is drawn as panels")
    if draw:
        fig, _ = draw(tput, topo)
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        check(titles == ["one SM", "every SM"], f"TMA throughput panel titles: {titles}")
        texts = legend_texts(fig)
        check("cp.async.bulk" in texts and "ld.global + st.shared" in texts, f"TMA throughput legend: {texts}")
        # Stages repeat each (bytes, method): the line joins the best of each size.
        rows = list(zip(*(tput.column(c) for c in ("scope", "bytes_per_transfer", "method", "gbps"))))
        best = max(r[3] for r in rows if r[0] == 0 and r[1] == 256 and r[2] == 0)
        lines = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "cp.async.bulk"]
        check(bool(lines) and lines[0].get_ydata()[0] == best, "the bulk line starts at the best of its stages")

    sweeps = found["hopper-dsmem__bandwidth"]
    draw = plot_special.special_plot(sweeps)
    check(draw is not None, "the DSMEM panels hint is drawn as panels")
    if draw:
        fig, _ = draw(sweeps, topo)
        titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
        check(titles == ["width bytes 4", "width bytes 8", "width bytes 16"], f"DSMEM panel titles: {titles}")
        check("global memory via L2" in legend_texts(fig), f"DSMEM legend: {legend_texts(fig)}")

# A heat map of an SM x line grid (cache-sharing/l2-slice-map's series): an image of 132 x 2048
# cells without a label per cell, the classes' checkerboard in its values.
with tempfile.TemporaryDirectory() as raw:
    folder = os.path.join(raw, "cache-sharing__l2-slice-map")
    os.makedirs(folder)
    hint = {"series": "sm-by-line", "kind": "heatmap", "x": "line_by_class", "y": "sm", "value": "cycles_above_least"}
    with open(os.path.join(folder, "plots.json"), "w") as f:
        json.dump({"probe": "cache-sharing/l2-slice-map", "plots": [hint]}, f)
    with open(os.path.join(folder, "sm-by-line.csv"), "w") as f:
        f.write("sm,line_by_class,cycles_above_least\n")
        for sm in range(132):
            for line in range(2048):
                f.write(f"{sm},{line},{28 if (sm // 16) % 2 != (line >= 1024) else 0}\n")
    grid = series_mod.discover(raw)[0]
    draw = plot_special.special_plot(grid)
    check(draw is not None, "the slice map's heat map hint is drawn as a heat map")
    if draw:
        fig, _ = draw(grid, topo)
        ax = fig.axes[0]
        check(len(ax.texts) == 0, f"a 132 x 2048 heat map labels its cells: {len(ax.texts)} texts")
        images = ax.get_images()
        shape = images[0].get_array().shape if images else None
        check(shape == (132, 2048), f"the heat map's image is {shape}, not 132 x 2048")
        if images:
            a = images[0].get_array()
            check(a[0][0] == 0 and a[16][0] == 28 and a[0][1024] == 28, "the heat map's cells hold the grid")

for p in problems:
    print("FAIL:", p)
print("plot hints:", "ok" if not problems else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
