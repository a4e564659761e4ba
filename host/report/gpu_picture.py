#!/usr/bin/env python3
"""memtopo draw -o gpu.svg|png: the GPU at a glance as a picture, as hwloc's lstopo draws a CPU
machine (docs/host.md, "memtopo draw"). It draws the model `memtopo draw` builds from a topology
(the JSON of gpu_drawing_json): the GPU's identity and the run's conditions on top; the SMs one
box each inside their GPCs, the GPCs inside the L2 partitions they are near, the L2 inside DRAM
beside the other levels every SM shares (picture_chip.py); what each SM holds (one SRAM box with
the paths into it) and can run; loads in flight, compute peaks, clusters; the latency and the
bandwidth ladders and a legend of what is drawn (picture_ladders.py). Nesting shows sharing, as in
lstopo; in the SVG each SM, GPC and partition is an element with its id and a tooltip.
`memtopo draw` and `memtopo report` run it; it can also run alone:

    python3 gpu_picture.py MODEL.json -o gpu.svg

Exit status: 0 written, 2 bad input."""

import io
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from picture_canvas import COLOURS, LINE_IN, MARGIN, WIDTH_IN, Canvas, node_box, node_height, wrapped  # noqa: E402
from picture_chip import chip  # noqa: E402
from picture_ladders import ladder, legend, rates  # noqa: E402


def facts(c, model, x, w):
    for fact in model.get("facts", []):
        lines = wrapped(fact["parts"], w - 1.1, 7.5)
        c.text(x, c.y, fact["label"], size=7.5, weight="bold", colour="#b00020" if fact["label"] == "not measured"
               else "#333333")
        for k, line in enumerate(lines):
            c.text(x + 1.0, c.y + k * LINE_IN * 0.95, line, size=7.5)
        c.y += LINE_IN * 0.95 * len(lines) + 0.02


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
    c.box(x, top, w, c.y - top + 0.02, COLOURS["sm"], edge="#7a8fb0", at=0, gid="each-sm",
          title="each SM: its own copy of everything inside")
    c.y += 0.12


def extras(c, model, x, w):
    """Loads in flight, compute peaks, clusters and TMA: side by side, two a row."""
    nodes = model.get("extras", [])
    for i in range(0, len(nodes), 2):
        row = nodes[i:i + 2]
        each = (w - 0.1 * (len(row) - 1)) / len(row)
        h = max(node_height(n, each) for n in row)
        for k, n in enumerate(row):
            node_box(c, n, x + k * (each + 0.1), c.y, each, h)
        c.y += h + 0.07


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
    sms = model.get("sms")
    if sms:
        c.text(inner_x, c.y, "SMs: " + ", ".join(sms["parts"]), weight="bold")
        c.y += LINE_IN + 0.03
    chip(c, model, inner_x, inner_w)
    per_sm(c, model, inner_x, inner_w)
    extras(c, model, inner_x, inner_w)
    half = (inner_w - 0.3) / 2
    y0 = c.y + 0.05
    c.y = max(ladder(c, model, inner_x, y0, half), rates(c, model, inner_x + half + 0.3, y0, half)) + 0.1
    c.y = legend(c, model, inner_x, c.y, inner_w) + 0.05
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
