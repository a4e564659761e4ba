#!/usr/bin/env python3
"""memtopo draw -o gpu.svg|png: the GPU at a glance as a picture, as hwloc's lstopo draws a CPU
machine (docs/host.md, "memtopo draw"). It draws the model `memtopo draw` builds from a topology
(the JSON of gpu_drawing_json: the chip, its GPCs, what each SM holds, the levels the SMs share
with their instances), nearest level first, with the same values the text tree shows.
`memtopo draw` and `memtopo report` run it; it can also run alone:

    python3 gpu_picture.py MODEL.json -o gpu.svg

Exit status: 0 written, 2 bad input."""

import io
import json
import os
import sys
import textwrap

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from figure_text import plain  # noqa: E402

WIDTH_IN = 11.0
MARGIN = 0.25
LINE_IN = 0.19          # one line of 8.5 pt text
CHARS_PER_LINE = 160    # of a full-width box at 8.5 pt
MAX_BOXES = 32          # boxes in a row (GPCs, a level's instances); the rest counted in the last
MAX_LINES = 8           # lines of one text; the model's lists are capped (draw_model.cpp)
COLOURS = {"chip": "#f4f4f4", "gpcs": "#e3e9f5", "sm": "#dbe8f7", "chip_wide": "#dff0d8", "memory": "#f5e6cc",
           "instance": "#c9e3bf", "banner": "#b00020"}


class Canvas:
    """Boxes and text on inches, y downwards; the height grows with what is drawn."""

    def __init__(self):
        self.items = []
        self.y = MARGIN

    def box(self, x, y, w, h, colour, edge="#555555"):
        self.items.append(("box", x, y, w, h, colour, edge))

    def text(self, x, y, s, size=8.5, weight="normal", colour="#111111", ha="left"):
        self.items.append(("text", x, y, plain(s), size, weight, colour, ha))

    def render(self, path_or_file, fmt):
        import matplotlib
        matplotlib.use("Agg")
        matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, copyable
        matplotlib.rcParams["svg.hashsalt"] = "memtopo"  # the same file for the same model
        from matplotlib import pyplot as plt
        from matplotlib.patches import FancyBboxPatch
        height = self.y + MARGIN
        fig = plt.figure(figsize=(WIDTH_IN, height))
        ax = fig.add_axes([0, 0, 1, 1])
        ax.set_xlim(0, WIDTH_IN)
        ax.set_ylim(height, 0)
        ax.axis("off")
        for item in self.items:
            if item[0] == "box":
                _, x, y, w, h, colour, edge = item
                ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.05",
                                            facecolor=colour, edgecolor=edge, linewidth=0.8))
            else:
                _, x, y, s, size, weight, colour, ha = item
                ax.text(x, y, s, fontsize=size, fontweight=weight, color=colour, ha=ha, va="top",
                        family="DejaVu Sans")
        # No dates: the same model draws the same file.
        metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
        fig.savefig(path_or_file, format=fmt, dpi=150, metadata=metadata)
        plt.close(fig)


def wrapped(text, chars=CHARS_PER_LINE):
    return textwrap.wrap(text, chars) or [""]


def level_lines(level, w):
    return wrapped(level["text"], int(CHARS_PER_LINE * w / (WIDTH_IN - 2 * MARGIN)))[:MAX_LINES]


def level_height(level, w):
    return 0.16 + LINE_IN * (1 + len(level_lines(level, w))) + (0.4 if several(level) else 0)


def several(level):
    """Instances worth a box each: two or more (one instance is the level itself)."""
    return len(level.get("instances_sm_counts", [])) > 1


def level_box(c, level, x, w, colour, height=None, advance=True):
    """One level: its name in bold, its values, and a small box per instance where known."""
    lines = level_lines(level, w)
    counts = level.get("instances_sm_counts", [])
    height = height or level_height(level, w)
    c.box(x, c.y, w, height, colour)
    c.text(x + 0.1, c.y + 0.07, level["label"], weight="bold")
    for k, line in enumerate(lines):
        c.text(x + 0.1, c.y + 0.07 + LINE_IN * (k + 1), line)
    if several(level):
        instances(c, counts, x + 0.1, c.y + 0.1 + LINE_IN * (1 + len(lines)), w - 0.2, level["label"])
    if advance:
        c.y += height + 0.08


def boxes(c, names, total, x, y, w, h, colour, edge, what):
    """A row of small boxes, one per name of `total`; past MAX_BOXES the last box says how many
    more there are and that they are not drawn (20,000 GPCs stay a picture of bounded size)."""
    if total > MAX_BOXES:
        names = names[:MAX_BOXES - 1] + [f"+{total - MAX_BOXES + 1} more {what}, not drawn"]
    gap = 0.06
    each = (w - gap * (len(names) - 1)) / len(names)
    for k, name in enumerate(names):
        c.box(x + k * (each + gap), y, each, h, colour, edge=edge)
        c.text(x + k * (each + gap) + each / 2, y + h / 4, name, size=7.5, ha="center")


def instances(c, counts, x, y, w, label):
    noun = "partition" if label == "L2" else "group"
    names = [f"{noun} {k}: {n} SMs near" if noun == "partition" else f"{n} SMs"
             for k, n in enumerate(counts[:MAX_BOXES])]
    boxes(c, names, len(counts), x, y, w, 0.3, COLOURS["instance"], "#6a8f5c", noun + "s")


def gpc_row(c, model, x, w):
    counts = model.get("gpc_sm_counts", [])
    for line in wrapped("GPCs: " + model.get("gpc_bound", "") + model["gpc_text"])[:MAX_LINES]:
        c.text(x, c.y, line, weight="bold")
        c.y += LINE_IN
    c.y += 0.05
    if counts:
        boxes(c, [f"GPC {k}: {n} SMs" for k, n in enumerate(counts[:MAX_BOXES])], len(counts), x, c.y, w, 0.36,
              COLOURS["gpcs"], "#5b6f9a", "GPCs")
        c.y += 0.44


def draw(model):
    c = Canvas()
    x, w = MARGIN, WIDTH_IN - 2 * MARGIN
    top = c.y
    c.y += 0.1
    c.text(x + 0.12, c.y, model["title"], size=12, weight="bold")
    if model.get("head"):
        c.text(x + w - 0.12, c.y + 0.03, ", ".join(model["head"]), size=9, ha="right")
    c.y += 0.3
    if model.get("simulated"):
        c.text(x + 0.12, c.y, f"simulated GPU ({model['simulated']}): values of memtopo's simulator, not of "
               "hardware", size=9, weight="bold", colour=COLOURS["banner"])
        c.y += LINE_IN + 0.05
    inner_x, inner_w = x + 0.12, w - 0.24
    if model.get("gpc_text"):
        gpc_row(c, model, inner_x, inner_w)
    if model.get("per_sm"):
        sm_top = c.y
        c.y += 0.06
        c.text(inner_x + 0.1, c.y, "each SM", weight="bold", size=9)
        c.y += LINE_IN + 0.05
        # Two columns: the SM's levels side by side, nearest first, row by row.
        col_w = (inner_w - 0.3) / 2
        levels = model["per_sm"]
        for k in range(0, len(levels), 2):
            row = levels[k:k + 2]
            height = max(level_height(level, col_w) for level in row)
            for j, level in enumerate(row):
                level_box(c, level, inner_x + 0.1 + j * (col_w + 0.1), col_w, COLOURS["sm"], height, advance=False)
            c.y += height + 0.08
        c.items.insert(0, ("box", inner_x, sm_top, inner_w, c.y - sm_top, "#eef4fb", "#7a8fb0"))
        c.y += 0.1
    for level in model.get("chip_wide", []):
        level_box(c, level, inner_x, inner_w, COLOURS["memory"] if level["label"] == "DRAM" else COLOURS["chip_wide"])
    c.items.insert(0, ("box", x, top, w, c.y - top + 0.02, COLOURS["chip"], "#333333"))
    c.y += 0.04
    return c


def svg_text(model):
    """The picture as one SVG document (the report embeds it)."""
    out = io.StringIO()
    draw(model).render(out, "svg")
    return out.getvalue()


def svg_element(model):
    """The picture as an <svg> element to place in an HTML page (no XML prolog)."""
    text = svg_text(model)
    return text[text.index("<svg"):]


def main(argv=None):
    import argparse
    parser = argparse.ArgumentParser(prog="gpu_picture.py", description=__doc__.split("\n")[0])
    parser.add_argument("model", help="the JSON model memtopo draw builds")
    parser.add_argument("-o", "--output", required=True, help="picture to write: .svg, .png or .pdf")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    fmt = os.path.splitext(args.output)[1].lower().lstrip(".")
    if fmt not in ("svg", "png", "pdf"):
        print(f"gpu_picture.py: -o {args.output}: write .svg, .png or .pdf", file=sys.stderr)
        return 2
    try:
        with open(args.model, encoding="utf-8") as f:
            model = json.load(f)
        model["title"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"gpu_picture.py: {args.model}: not a drawing model ({e})", file=sys.stderr)
        return 2
    draw(model).render(args.output, fmt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
