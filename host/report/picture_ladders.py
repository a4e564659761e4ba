"""The foot of `memtopo draw`'s picture: the latency ladder (load to use of each level, cycles and
ns), the bandwidth ladder (each level's rate over the GPU) side by side, and the legend of what
the picture draws."""

from picture_canvas import COLOURS, LINE_IN, PALETTE, wrapped

BAR = 0.13
STEP = 0.18


def rung_number(v):
    """One decimal, or past a million an exponent (1e+308), as the text drawing shows it."""
    return f"{v:.1f}" if abs(v) < 1e6 else f"{v:.3g}"


def rate_text(bytes_per_second):
    """As the text drawing writes a rate: TB/s from 1 TB/s, GB/s below."""
    if bytes_per_second >= 1e12:
        return f"{bytes_per_second / 1e12:.2f} TB/s"
    return f"{bytes_per_second / 1e9:.0f} GB/s"


def _bars(c, x, y, w, rows, colour, edge):
    """Rows of (label, value, text): a bar each on one linear scale, the text after it."""
    top = max((v for _, v, _ in rows), default=0)
    label_w, value_w = 1.0, 1.6
    bar_w = w - label_w - value_w
    for label, value, text in rows:
        frac = max(value, 0.0) / top if top > 0 else 0.0
        c.text(x, y, label, size=7.5)
        c.box(x + label_w, y, max(bar_w * frac, 0.02), BAR, colour, edge=edge)
        c.text(x + label_w + bar_w + 0.05, y, text, size=7.5)
        y += STEP
    return y


def ladder(c, model, x, y, w):
    """Load-to-use of each level as a bar on a linear scale of cycles (the steps are the point)."""
    rungs = model.get("ladder", [])
    mhz = model.get("sm_clock_mhz", 0)
    c.text(x, y, "latencies", weight="bold", size=9)
    c.text(x + 0.75, y + 0.015, "load to use" + (f"; ns at the {mhz:.0f} MHz SM clock" if mhz else ""), size=7)
    y += LINE_IN + 0.06
    if not rungs:
        c.text(x, y, "not measured", size=7.5)
        return y + LINE_IN
    rows = []
    for r in rungs:
        ns = f" = {rung_number(r['cycles'] / (mhz / 1000))} ns" if mhz else ""
        rows.append((r["label"], r["cycles"], f"{r['mark']}{rung_number(r['cycles'])} cyc{ns}"))
    return _bars(c, x, y, w, rows, "#8fb3d9", "#5b7fa8")


def rates(c, model, x, y, w):
    """Each level's rate over the whole GPU, nearest first, on one linear scale."""
    c.text(x, y, "bandwidths", weight="bold", size=9)
    c.text(x + 0.95, y + 0.015, "over the whole GPU", size=7)
    y += LINE_IN + 0.06
    found = model.get("rates", [])
    if not found:
        c.text(x, y, "not measured", size=7.5)
        return y + LINE_IN
    rows = [(r["label"], r["bytes_per_second"], r["mark"] + rate_text(r["bytes_per_second"])) for r in found]
    y = _bars(c, x, y, w, rows, "#9fd18f", "#5f9a4f")
    for r in found:
        if r["note"]:
            c.text(x, y, f"{r['label']}: {r['note']}", size=6.5, colour="#444444")
            y += LINE_IN * 0.85
    return y


# What the picture draws, each with its colour: a reader needs it only once.
SWATCHES = [("DRAM: holds all below", COLOURS["memory"]), ("L2, TLB, constant L1.5: shared by every SM",
                                                            COLOURS["chip_wide"]),
            ("L2 partition: the GPCs near it", COLOURS["partition"]), ("GPC (edge: its colour)", "#eef3f9"),
            ("SM: its number; hover for its maps", COLOURS["sm_cell"]), ("each SM: its own copy", COLOURS["sm"]),
            ("SRAM: one storage", COLOURS["storage"]), ("a path into it", COLOURS["path"]),
            ("a cache of its own", COLOURS["cache"]), ("unknown (?)", COLOURS["unknown"])]


def legend(c, model, x, y, w):
    c.text(x, y, "legend", weight="bold", size=9)
    c.text(x + 0.6, y + 0.015, "what the picture draws; a box inside another shares it, as in lstopo", size=7)
    y += LINE_IN + 0.06
    columns = 3
    for k, (name, colour) in enumerate(SWATCHES):
        sx, sy = x + (k % columns) * (w / columns), y + (k // columns) * STEP
        c.box(sx, sy, 0.22, BAR, colour, edge=PALETTE[0] if "GPC" in name else "#777777")
        c.text(sx + 0.28, sy, name, size=7)
    y += STEP * ((len(SWATCHES) + columns - 1) // columns) + 0.04
    for mark, meaning in model.get("legend", []):
        lines = wrapped([meaning], w - 0.9, 7)
        c.text(x, y, mark, size=7, weight="bold")
        for k, line in enumerate(lines):
            c.text(x + 0.85, y + k * 0.15, line, size=7)
        y += 0.15 * len(lines) + 0.02
    return y
