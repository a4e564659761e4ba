"""A figure as an SVG data URI: the page stays one self-contained file."""

import base64
import io

import matplotlib

matplotlib.use("Agg")  # no display, no GUI toolkit
matplotlib.rcParams.update({
    "svg.fonttype": "none",       # text stays text: smaller files, selectable labels
    "svg.hashsalt": "memtopo",    # the same series gives the same SVG
    "font.size": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.titlesize": 9.5,
    "figure.dpi": 100,
    "savefig.dpi": 110,           # the resolution of rasterized point clouds
})


def svg_data_uri(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
