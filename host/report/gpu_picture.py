#!/usr/bin/env python3
"""memtopo draw -o gpu.svg|png: the GPU at a glance as a picture, as hwloc's lstopo draws a CPU
machine (docs/host.md, "memtopo draw"). It draws the model `memtopo draw` builds from a topology
(the JSON of gpu_drawing_json): the GPU's identity and the run's conditions on top, the SMs with
a strip of one cell per SM for their GPC and L2 partition, what each SM holds (one SRAM box with
the paths into it), the levels the SMs share with their instances, the latency ladder in cycles
and ns, and a legend of colours and marks. Nesting shows sharing, as in lstopo.
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
LINE_IN = 0.17          # one line of 8 pt text
CHARS_PER_IN = 16.0     # of 8 pt text (DejaVu Sans), with room for wide digits
MAX_BOXES = 32          # boxes in a row (GPCs, a level's instances); the rest counted in the last
MAX_LINES = 8           # lines of one text; the model's lists are capped (draw_model.cpp)
MAX_CELLS = 1024        # cells of an SM strip (the model caps them too)
COLOURS = {"chip": "#f7f7f7", "sm": "#e4eefa", "storage": "#cfe0f5", "path": "#f4f8fd", "cache": "#dbe8f7",
           "chip_wide": "#dff0d8", "instance": "#c9e3bf", "memory": "#f5e6cc", "info": "#ffffff",
           "banner": "#b00020", "unknown": "#bbbbbb"}
# Instances (GPCs, partitions, groups) by index: the strip's cells and the boxes below share them.
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#8cd17d", "#86bcb6", "#d4a6c8"]


def palette(k):
    return COLOURS["unknown"] if k < 0 else PALETTE[k % len(PALETTE)]


class Canvas:
    """Boxes and text on inches, y downwards; the height grows with what is drawn."""

    def __init__(self):
        self.items = []
        self.y = MARGIN

    def box(self, x, y, w, h, colour, edge="#555555", at=None):
        item = ("box", x, y, w, h, colour, edge)
        self.items.append(item) if at is None else self.items.insert(at, item)

    def text(self, x, y, s, size=8, weight="normal", colour="#111111", ha="left"):
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
                ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.03",
                                            facecolor=colour, edgecolor=edge, linewidth=0.7))
            else:
                _, x, y, s, size, weight, colour, ha = item
                ax.text(x, y, s, fontsize=size, fontweight=weight, color=colour, ha=ha, va="top",
                        family="DejaVu Sans")
        # No dates: the same model draws the same file.
        metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
        fig.savefig(path_or_file, format=fmt, dpi=150, metadata=metadata)
        plt.close(fig)


def wrapped(parts, w, size=8):
    """The parts joined by ", " in lines that fit w inches, each part broken only where it must."""
    chars = max(12, int(w * CHARS_PER_IN * 8 / size))
    return (textwrap.wrap(", ".join(parts), chars, break_long_words=True) or [""])[:MAX_LINES]


def node_height(node, w):
    return 0.1 + LINE_IN * (1 + len(wrapped(node.get("parts", []), w - 0.16))) if node.get("parts") else 0.1 + LINE_IN


def node_box(c, node, x, y, w, h=None, colour=None):
    """A level: its name in bold and its values below."""
    lines = wrapped(node.get("parts", []), w - 0.16) if node.get("parts") else []
    h = h or node_height(node, w)
    c.box(x, y, w, h, colour or COLOURS.get(node.get("kind"), COLOURS["cache"]))
    c.text(x + 0.08, y + 0.05, node["label"], weight="bold")
    for k, line in enumerate(lines):
        c.text(x + 0.08, y + 0.05 + LINE_IN * (k + 1), line)
    return h


def boxes(c, names, colours, total, x, y, w, h, what):
    """A row of small boxes, one per name of `total`; past MAX_BOXES the last box says how many
    more there are and that they are not drawn (20,000 GPCs stay a picture of bounded size)."""
    if total > MAX_BOXES:
        names = names[:MAX_BOXES - 1] + [f"+{total - MAX_BOXES + 1} more {what}, not drawn"]
        colours = colours[:MAX_BOXES - 1] + [COLOURS["unknown"]]
    gap = 0.05
    each = (w - gap * (len(names) - 1)) / len(names)
    for k, name in enumerate(names):
        c.box(x + k * (each + gap), y, each, h, colours[k], edge="#777777")
        c.text(x + k * (each + gap) + each / 2, y + h / 2 - 0.06, name, size=6.5, ha="center")


def facts(c, model, x, w):
    for fact in model.get("facts", []):
        lines = wrapped(fact["parts"], w - 1.1, 7.5)
        c.text(x, c.y, fact["label"], size=7.5, weight="bold", colour="#b00020" if fact["label"] == "not measured"
               else "#333333")
        for k, line in enumerate(lines):
            c.text(x + 1.0, c.y + k * LINE_IN * 0.95, line, size=7.5)
        c.y += LINE_IN * 0.95 * len(lines) + 0.02


def strips(c, model, x, w):
    """The SMs and their map: one coloured cell per SM for each grouping."""
    sms = model.get("sms")
    if sms:
        c.text(x, c.y, "SMs: " + ", ".join(sms["parts"]), weight="bold")
        c.y += LINE_IN + 0.03
    label_w = 0.95
    by_label = {s["label"]: s for s in model.get("strips", [])}
    for s in model.get("strips", []):
        if s["same_as"]:
            c.text(x, c.y, f"{s['label']}: the {s['same_as']}s' split (where both know the SM)", size=7.5)
            c.y += LINE_IN
            continue
        cells = s["cells"][:MAX_CELLS]
        c.text(x, c.y + 0.02, s["label"], size=7.5, weight="bold")
        each = (w - label_w) / max(len(cells), 1)
        for k, v in enumerate(cells):
            c.box(x + label_w + k * each, c.y, each, 0.16, palette(v), edge="#ffffff")
        c.y += 0.19
    if by_label:
        n = max(len(s["cells"]) for s in by_label.values())
        c.text(x + label_w, c.y, "SM 0", size=6.5)
        c.text(x + w, c.y, f"SM {n - 1}" + (f" (the first {n})" if n >= MAX_CELLS else ""), size=6.5, ha="right")
        c.y += LINE_IN
    counts = model.get("gpc_sm_counts", [])
    if counts:
        shown = counts[:MAX_BOXES]
        boxes(c, [f"GPC {k}: {n} SMs" for k, n in enumerate(shown)], [lighter(palette(k)) for k in range(len(shown))],
              len(counts), x, c.y, w, 0.24, "GPCs")
        c.y += 0.32


def lighter(colour):
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#%02x%02x%02x" % tuple(int(v + (255 - v) * 0.55) for v in (r, g, b))


def per_sm(c, model, x, w):
    """'each SM': the SRAM with its paths side by side inside, the SM's own caches on the right."""
    levels = model.get("per_sm", [])
    if not levels:
        return
    top = c.y
    c.text(x + 0.1, c.y + 0.05, "each SM", weight="bold", size=9)
    c.text(x + 0.8, c.y + 0.065, "(its own copy of all inside)", size=7)
    c.y += LINE_IN + 0.12
    storages = [n for n in levels if n["kind"] == "storage"]
    others = [n for n in levels if n["kind"] != "storage"]
    inner_x, inner_w = x + 0.1, w - 0.2
    side_w = 2.6 if storages and others else 0
    main_w = inner_w - side_w - (0.1 if side_w else 0)
    y0 = c.y
    for s in storages:
        head = wrapped(s["parts"], main_w - 0.16)
        paths = s["children"]
        col_w = (main_w - 0.2 - 0.08 * (len(paths) - 1)) / max(len(paths), 1)
        path_h = max(node_height(p, col_w) for p in paths)
        h = 0.1 + LINE_IN * (1 + len(head)) + 0.08 + path_h + 0.1
        node_box(c, s, inner_x, c.y, main_w, h)
        py = c.y + 0.1 + LINE_IN * (1 + len(head)) + 0.04
        for k, p in enumerate(paths):
            node_box(c, p, inner_x + 0.1 + k * (col_w + 0.08), py, col_w, path_h)
        c.y += h + 0.08
    main_bottom = c.y
    c.y = y0
    for n in others:
        width = side_w or inner_w
        nx = inner_x + (main_w + 0.1 if side_w else 0)
        c.y += node_box(c, n, nx, c.y, width) + 0.08
    c.y = max(c.y, main_bottom)
    c.box(x, top, w, c.y - top + 0.02, COLOURS["sm"], edge="#7a8fb0", at=0)
    c.y += 0.12


def chip_wide(c, model, x, w):
    for node in model.get("chip_wide", []):
        kids = node.get("children", [])
        h = node_height(node, w) + (0.36 if kids else 0)
        node_box(c, node, x, c.y, w, h, COLOURS["memory"] if node["kind"] == "memory" else COLOURS["chip_wide"])
        if kids:
            names = [k["label"] + ": " + ", ".join(k["parts"]) for k in kids[:MAX_BOXES]]
            colours = [lighter(palette(i)) for i in range(len(names))]
            boxes(c, names, colours, len(kids), x + 0.1, c.y + h - 0.34, w - 0.2, 0.26, "instances")
        c.y += h + 0.07


def rung_number(v):
    """One decimal, or past a million an exponent (1e+308), as the text drawing shows it."""
    return f"{v:.1f}" if abs(v) < 1e6 else f"{v:.3g}"


def ladder(c, model, x, y, w):
    """Load-to-use of each level as a bar on a linear scale of cycles (the steps are the point),
    with cycles and ns."""
    rungs = model.get("ladder", [])
    mhz = model.get("sm_clock_mhz", 0)
    c.text(x, y, "latencies", weight="bold", size=9)
    c.text(x + 0.75, y + 0.015, "load to use" + (f"; ns at the {mhz:.0f} MHz SM clock" if mhz else ""), size=7)
    y += LINE_IN + 0.06
    if not rungs:
        c.text(x, y, "not measured", size=7.5)
        return y + LINE_IN
    top = max(r["cycles"] for r in rungs)
    label_w, value_w = 1.0, 1.35
    bar_w = w - label_w - value_w
    for r in rungs:
        frac = max(r["cycles"], 0.0) / top if top > 0 else 0.0
        c.text(x, y, r["label"], size=7.5)
        c.box(x + label_w, y, max(bar_w * frac, 0.02), 0.13, "#8fb3d9", edge="#5b7fa8")
        ns = f" = {rung_number(r['cycles'] / (mhz / 1000))} ns" if mhz else ""
        c.text(x + label_w + bar_w + 0.05, y, f"{r['mark']}{rung_number(r['cycles'])} cyc{ns}", size=7.5)
        y += 0.18
    return y


def legend(c, model, x, y, w):
    c.text(x, y, "legend", weight="bold", size=9)
    y += LINE_IN + 0.06
    swatches = [("each SM", COLOURS["sm"]), ("SRAM: one storage", COLOURS["storage"]), ("a path into it", COLOURS["path"]),
                ("a cache of its own", COLOURS["cache"]), ("shared by all SMs", COLOURS["chip_wide"]),
                ("DRAM", COLOURS["memory"]), ("instance / index", PALETTE[0]), ("unknown (?)", COLOURS["unknown"])]
    for k, (name, colour) in enumerate(swatches):
        sx, sy = x + (k % 2) * (w / 2), y + (k // 2) * 0.18
        c.box(sx, sy, 0.22, 0.13, colour, edge="#777777")
        c.text(sx + 0.28, sy, name, size=7)
    y += 0.18 * ((len(swatches) + 1) // 2) + 0.04
    for mark, meaning in model.get("legend", []):
        lines = wrapped([meaning], w - 0.75, 7)
        c.text(x, y, mark, size=7, weight="bold")
        for k, line in enumerate(lines):
            c.text(x + 0.72, y + k * 0.15, line, size=7)
        y += 0.15 * len(lines) + 0.02
    return y


def draw(model):
    c = Canvas()
    x, w = MARGIN, WIDTH_IN - 2 * MARGIN
    top = c.y
    c.y += 0.1
    c.text(x + 0.12, c.y, model["title"], size=13, weight="bold")
    if model.get("head"):
        c.text(x + w - 0.12, c.y + 0.04, ", ".join(model["head"]), size=9, ha="right")
    c.y += 0.32
    if model.get("simulated"):
        c.text(x + 0.12, c.y, f"simulated GPU ({model['simulated']}): values of memtopo's simulator, not of "
               "hardware", size=9, weight="bold", colour=COLOURS["banner"])
        c.y += LINE_IN + 0.05
    inner_x, inner_w = x + 0.12, w - 0.24
    facts(c, model, inner_x, inner_w)
    c.y += 0.08
    strips(c, model, inner_x, inner_w)
    per_sm(c, model, inner_x, inner_w)
    chip_wide(c, model, inner_x, inner_w)
    for node in model.get("extras", []):
        c.y += node_box(c, node, inner_x, c.y, inner_w) + 0.07
    half = (inner_w - 0.2) / 2
    y0 = c.y + 0.05
    c.y = max(ladder(c, model, inner_x, y0, half), legend(c, model, inner_x + half + 0.2, y0, half)) + 0.05
    c.box(x, top, w, c.y - top + 0.02, COLOURS["chip"], "#333333", at=0)
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
