#!/usr/bin/env python3
"""The generic plot's choices on series made here: IDs against IDs (an eviction set's member
lines per target) drawn as points, never joined; a series of two rows drawn in one panel, not
one per column; an all-zero column on an axis from zero up. Usage: check_plot_choices.py
SOURCE_DIR. Exit 77 (skipped) without matplotlib."""

import os
import sys
import tempfile

from need_module import need  # noqa: E402

need("matplotlib")

source = sys.argv[1]
sys.path.insert(0, os.path.join(source, "host", "report"))
import plot_generic  # noqa: E402
import series as series_mod  # noqa: E402
import topology  # noqa: E402

topo = topology.load(os.path.join(source, "tests", "report", "inputs", "h100", "topology.toml"))
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


def write(raw, folder, name, header, rows):
    os.makedirs(os.path.join(raw, folder), exist_ok=True)
    with open(os.path.join(raw, folder, name + ".csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")


def data_lines(ax):
    """The lines drawn from the series (markers are axhline/axvline: two points on a side)."""
    return [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 2 or ln.get_label().startswith("_child")]


with tempfile.TemporaryDirectory() as raw:
    members = [(t, (t * 7919 + k * 104729) % 65536, 16, 1, 0) for t in (3, 11, 40, 97) for k in range(16)]
    write(raw, "data-cache__l2-eviction-sets", "l2_eviction_sets",
          ["target_line", "member_line", "set_lines", "complete", "sm"], members)
    write(raw, "x__pair", "pair", ["size_bytes", "near_cycles", "far_cycles", "loads"], [(1024, 30, 200, 8), (2048, 31, 210, 16)])
    write(raw, "x__zeros", "misses", ["footprint_bytes", "misses"], [(1024 * 2 ** i, 0) for i in range(8)])
    found = {s.folder: s for s in series_mod.discover(raw)}

    sets = found["data-cache__l2-eviction-sets"]
    fig, _ = plot_generic.plot(sets, topo)
    for ax in fig.axes:
        for ln in ax.get_lines():
            if len(ln.get_xdata()) > 2:
                check(ln.get_linestyle() == "None", f"eviction sets: {ln.get_label()!r} joins IDs with a line")

    pair = found["x__pair"]
    fig, _ = plot_generic.plot(pair, topo)
    check(len(fig.axes) == 1, f"a series of two rows is drawn in {len(fig.axes)} panels")

    zeros = found["x__zeros"]
    fig, _ = plot_generic.plot(zeros, topo)
    low, high = fig.axes[0].get_ylim()
    check(low == 0 and high >= 1, f"an all-zero column is drawn on {low:g}..{high:g}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("plot choices: IDs as points, two rows in one panel, zeros from zero up")
