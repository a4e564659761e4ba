"""Plots for series a line plot would hide, as their probes declare them (plot_hints.py): heat
maps of a value over two columns, bars (a histogram, or named levels), and a panel per value of
a column with a line per group. Results the hint names are drawn as lines or outlined cells."""

import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from axes import MARKER_COLORS, finish_legend, set_axis
from figure_text import plain
from plot_hints import columns_present, hint_for, key_value, labels, marks, numbers_of, value_name
from units import format_value, short_number

_LINE_STYLES = {"x": ("--", "#9467bd"), "y": ("--", "#d62728")}


def is_wide(draw):
    """Plots that take the page's whole width (a grid of panels)."""
    return getattr(draw, "wide", False)


def special_plot(series):
    """The function that plots `series`, or None for the generic plot."""
    hint = hint_for(series)
    if not hint:
        return None
    if hint.kind == "heatmap" and columns_present(series, hint.x, hint.y, hint.value):
        return _bind(plot_heatmap, hint)
    if hint.kind == "bars" and columns_present(series, hint.x, hint.y, hint.annotate):
        return _bind(plot_bars, hint)
    if hint.kind == "panels" and columns_present(series, hint.panel, hint.x, hint.y, hint.group):
        draw = _bind(plot_panels, hint)
        draw.wide = True
        return draw
    return None


def _bind(fn, hint):
    def draw(series, topo):
        return fn(series, topo, hint)
    return draw


def plot_heatmap(series, topo, hint):
    """The best `value` of each (y, x) cell over the other columns; marked cells outlined."""
    xs, ys, vs = series.column(hint.x), series.column(hint.y), series.column(hint.value)
    rows, cols = sorted(set(ys)), sorted(set(xs))
    row_of, col_of = {r: i for i, r in enumerate(rows)}, {c: j for j, c in enumerate(cols)}
    grid = np.full((len(rows), len(cols)), np.nan)
    for x, y, v in zip(xs, ys, vs):
        i, j = row_of[y], col_of[x]
        grid[i, j] = v if math.isnan(grid[i, j]) else max(grid[i, j], v)
    scale = 1e9 if np.nanmax(grid) >= 1e9 else 1.0
    # A grid of hundreds of rows or columns (an SM x line map) is an image: no label per cell,
    # matplotlib's own ticks, and a fixed height.
    large = len(rows) > 24 or len(cols) > 48
    fig = Figure(figsize=(7.2, 4.8 if large else 1.9 + 0.45 * len(rows)))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid / scale), cmap="viridis", aspect="auto", origin="lower",
                      vmin=0, vmax=np.nanmax(grid) / scale)  # from zero: a flat surface looks flat
    unit = " (1e9)" if scale > 1 else ""
    bar = fig.colorbar(image, ax=ax, label=plain(f"best {hint.value}{unit}"))
    bar.formatter.set_useOffset(False)
    ax.grid(False)
    if not large:
        ax.set_xticks(range(len(cols)), [short_number(c) for c in cols])
        ax.set_yticks(range(len(rows)), [short_number(r) for r in rows])
    ax.set_xlabel(plain(hint.x) + ("" if not large or cols == list(range(len(cols))) else " (rank)"))
    ax.set_ylabel(plain(hint.y) + ("" if not large or rows == list(range(len(rows))) else " (rank)"))
    top = np.nanmax(grid)
    for (i, j), v in np.ndenumerate(grid):
        if not math.isnan(v) and not large:
            ax.text(j, i, short_number(v / scale, 3), ha="center", va="center", fontsize=7,
                    color="black" if v > 0.6 * top else "white")
    entries = 0
    for m in marks(hint, series.name):
        cell = numbers_of(key_value(topo, m.key) if m.where == "cell" else "")[:2]
        if len(cell) < 2 or cell[0] not in rows or cell[1] not in cols:
            continue
        i, j = rows.index(cell[0]), cols.index(cell[1])
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, linewidth=max(1.0, 2.2 - entries * 0.6),
                               edgecolor=MARKER_COLORS[entries % len(MARKER_COLORS)], label=plain(m.key)))
        entries += 1
    ax.set_title(plain(f"{series.name}: {hint.value} by {hint.y} and {hint.x}"), fontsize=9.5)
    finish_legend(ax, entries)
    return fig, entries


def plot_bars(series, topo, hint):
    """A bar per row: y at x, or rows in order named by the hint's labels; annotated, marked."""
    ys = series.column(hint.y)
    fig = Figure(figsize=(7.2, 3.3))
    ax = fig.subplots()
    if hint.x:
        xs = series.column(hint.x)
        width = max(1.0, (max(xs) - min(xs)) / 150.0)
        bars = ax.bar(xs, ys, width=width, color="#1f77b4", label=plain(hint.y), zorder=3)
        set_axis(ax, "x", hint.x, xs, log_ratio=1e9)
        set_axis(ax, "y", hint.y, ys, log_ratio=100.0)
    else:
        bars = ax.bar(range(len(ys)), ys, color="#1f77b4", zorder=3)
        ax.set_xticks(range(len(ys)), [plain(t) for t in labels(hint, topo, len(ys))], rotation=20, ha="right")
        ax.set_ylabel(plain(hint.y))
        ax.set_ylim(0, max(ys) * 1.12)
    if hint.annotate:
        for bar, note in zip(bars, series.column(hint.annotate)):
            ax.annotate(plain(short_number(note, 3)), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
    drawn = _draw_marks(ax, topo, marks(hint, series.name), ax.get_xlim(), ax.get_ylim())
    what = f" ({hint.annotate} above each bar)" if hint.annotate else ""
    ax.set_title(plain(f"{series.name}: {hint.y}{' per ' + hint.x if hint.x else ''}{what}"), fontsize=9.5)
    if drawn:
        finish_legend(ax, drawn + (1 if hint.x else 0))
    return fig, drawn


def plot_panels(series, topo, hint):
    """A panel per value of hint.panel: y over x, a line per value of hint.group, marks per panel.
    Where rows repeat an (x, group) pair (a setting the hint does not name), every row is a
    point and the line joins the best of each x."""
    panels = sorted(set(series.column(hint.panel)))
    count = int(max(panels)) + 1 if panels and max(panels) >= 0 else 0
    names = labels(hint, topo, count, hint.panel) if hint.labels else []
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(4.4 * ncols, 2.8 * nrows + 0.7))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    rows = list(zip(series.column(hint.panel), series.column(hint.x), series.column(hint.y), series.column(hint.group)))
    drawn = 0
    for ax, value in zip(axes.flat, panels):
        named = 0 <= value < len(names) and value.is_integer() and names[int(value)] != f"{int(value)}"
        name = names[int(value)] if named else f"{hint.panel.replace('_', ' ')} {value:g}"
        mine = [r for r in rows if r[0] == value]
        for i, g in enumerate(sorted(set(r[3] for r in mine))):
            pts = sorted((r[1], r[2]) for r in mine if r[3] == g)
            best = {}
            for x, y in pts:
                best[x] = max(best.get(x, y), y)
            color = f"C{i % 10}"
            label = value_name(hint, hint.group, g) or f"{hint.group.replace('_', ' ')} {g:g}"
            if len(best) < len(pts):
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="none", marker="o", markersize=2,
                        alpha=0.45, color=color)
            ax.plot(list(best), list(best.values()), marker="o", markersize=2.5, linewidth=1.1, color=color, label=plain(label))
        set_axis(ax, "x", hint.x, [r[1] for r in mine], log_ratio=4)
        ax.set_ylabel(plain(hint.y), fontsize=8)
        ax.set_title(plain(name), fontsize=8.5)
        drawn += _draw_marks(ax, topo, marks(hint, series.name, name), ax.get_xlim(), ax.get_ylim(), legend=False)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, texts = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, texts, loc="lower center", ncol=6, fontsize=7.5, frameon=False)
    fig.suptitle(plain(f"{series.name}: {hint.y} over {hint.x} per {hint.panel}"), fontsize=9.5)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return fig, drawn


def _draw_marks(ax, topo, wanted, xlim, ylim, legend=True):
    """Lines at the marked keys' values within the axes; an array's values each, named by `names`."""
    drawn = 0
    for m in wanted:
        if m.where not in _LINE_STYLES:
            continue
        value = key_value(topo, m.key)
        values = value if isinstance(value, list) else [value]
        names = key_value(topo, m.names) if m.names else None
        lo, hi = xlim if m.where == "x" else ylim
        for i, v in enumerate(values):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                continue
            name = names[i] if isinstance(names, list) and i < len(names) else None
            index = f"[{i}]" if isinstance(value, list) else ""
            label = f"{name + ': ' if name else ''}{m.key}{index} = {format_value(m.key, v)}"
            style, color = _LINE_STYLES[m.where]
            color = MARKER_COLORS[drawn % len(MARKER_COLORS)] if legend else color
            line = ax.axvline if m.where == "x" else ax.axhline
            line(v, color=color, linestyle=style, linewidth=1, label=plain(label) if legend else None, zorder=2)
            if not legend:
                at = (v, 0.04) if m.where == "x" else (0.01, v)
                coords = ("data", "axes fraction") if m.where == "x" else ("axes fraction", "data")
                ax.annotate(f"{short_number(v)}", at, xycoords=coords, fontsize=7, color=color,
                            rotation=90 if m.where == "x" else 0, va="bottom")
            drawn += 1
    return drawn
