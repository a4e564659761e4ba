"""The drawing surface of `memtopo draw`'s picture (gpu_picture.py): boxes and text on inches,
boxes that may carry an SVG id and a tooltip, text wrapped without parting a number from its
unit, and the colours shared by every part of the picture."""

import html
import re
import textwrap

from figure_text import plain

WIDTH_IN = 11.0
MARGIN = 0.25
LINE_IN = 0.17          # one line of 8 pt text
CHARS_PER_IN = 16.0     # of 8 pt text (DejaVu Sans), with room for wide digits
MAX_BOXES = 32          # boxes in a row (GPCs, a level's instances); the rest counted in the last
MAX_LINES = 8           # lines of one text; the model's lists are capped (draw_model.cpp)
MAX_CELLS = 1024        # SMs drawn (the model caps its maps too)
COLOURS = {"chip": "#f7f7f7", "sm": "#e4eefa", "storage": "#cfe0f5", "path": "#f4f8fd", "cache": "#dbe8f7",
           "chip_wide": "#dff0d8", "instance": "#c9e3bf", "memory": "#f5e6cc", "info": "#ffffff",
           "banner": "#b00020", "unknown": "#bbbbbb", "shared_level": "#dff0d8", "partition": "#eef7ea", "group": "#ffffff",
           "sm_cell": "#cfe0f5"}
# Instances (GPCs, partitions, groups) by index: the boxes and the marks of one grouping share them.
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#8cd17d", "#86bcb6", "#d4a6c8"]
# A number and the unit after it stay on one line ("32.0 cyc", "3.20 TB/s").
_NUMBER_UNIT = re.compile(r"(\d) (?=[A-Za-z%/])")


def palette(k):
    return COLOURS["unknown"] if k < 0 else PALETTE[k % len(PALETTE)]


def lighter(colour, by=0.55):
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#%02x%02x%02x" % tuple(int(v + (255 - v) * by) for v in (r, g, b))


class Canvas:
    """Boxes and text on inches, y downwards; the height grows with what is drawn. A box with an
    id is an element of the SVG (`<g id=...>`), with its tooltip where it has one."""

    def __init__(self):
        self.items = []
        self.y = MARGIN
        self.titles = {}

    def box(self, x, y, w, h, colour, edge="#555555", at=None, gid=None, title=None, width=0.7):
        item = ("box", x, y, w, h, colour, edge, gid, width)
        self.items.append(item) if at is None else self.items.insert(at, item)
        if gid and title:
            self.titles[gid] = title

    def text(self, x, y, s, size=8, weight="normal", colour="#111111", ha="left"):
        self.items.append(("text", x, y, plain(s), size, weight, colour, ha))

    def render(self, path_or_file, fmt):
        import io
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
                _, x, y, w, h, colour, edge, gid, width = item
                patch = FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.03",
                                       facecolor=colour, edgecolor=edge, linewidth=width)
                if gid:
                    patch.set_gid(gid)
                ax.add_patch(patch)
            else:
                _, x, y, s, size, weight, colour, ha = item
                ax.text(x, y, s, fontsize=size, fontweight=weight, color=colour, ha=ha, va="top",
                        family="DejaVu Sans")
        # No dates: the same model draws the same file.
        metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
        if fmt != "svg":
            fig.savefig(path_or_file, format=fmt, dpi=150, metadata=metadata)
            plt.close(fig)
            return
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata=metadata)
        plt.close(fig)
        text = self._with_titles(out.getvalue())
        if isinstance(path_or_file, str):
            with open(path_or_file, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            path_or_file.write(text)

    def _with_titles(self, svg):
        """Each box's tooltip as the first child of its <g>: a browser shows it on hover."""
        for gid, title in self.titles.items():
            tag = f'<g id="{gid}">'
            svg = svg.replace(tag, tag + f"<title>{html.escape(title)}</title>", 1)
        return svg


def wrapped(parts, w, size=8):
    """The parts joined by ", " in lines that fit w inches, each part broken only where it must,
    never between a number and its unit."""
    chars = max(12, int(w * CHARS_PER_IN * 8 / size))
    text = _NUMBER_UNIT.sub("\\1\u00a0", ", ".join(parts))  # no break there; a plain space again below
    lines = textwrap.wrap(text, chars, break_long_words=True) or [""]
    return [line.replace("\u00a0", " ") for line in lines[:MAX_LINES]]


def node_height(node, w):
    return 0.1 + LINE_IN * (1 + len(wrapped(node.get("parts", []), w - 0.16))) if node.get("parts") else 0.1 + LINE_IN


def node_box(c, node, x, y, w, h=None, colour=None, gid=None):
    """A level: its name in bold and its values below."""
    lines = wrapped(node.get("parts", []), w - 0.16) if node.get("parts") else []
    h = h or node_height(node, w)
    c.box(x, y, w, h, colour or COLOURS.get(node.get("kind"), COLOURS["cache"]), gid=gid)
    c.text(x + 0.08, y + 0.05, node["label"], weight="bold")
    for k, line in enumerate(lines):
        c.text(x + 0.08, y + 0.05 + LINE_IN * (k + 1), line)
    return h
