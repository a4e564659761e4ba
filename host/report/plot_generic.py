"""The plot of any numeric series: x the first column that varies (or a named sweep axis),
y the most telling column(s), one line per value of a grouping column, markers at the probe's
results. The specific plots (plot_special.py) handle what this cannot show well."""

from dataclasses import dataclass

from matplotlib.figure import Figure

from axes import draw_markers, finish_legend, set_axis
from figure_text import plain
from plot_hints import columns_present, hint_for, value_name

# The y columns that say most, best first (miss counts, latencies, rates).
PREFERRED_Y = (
    "miss_fraction", "misses_per_pass", "loads_per_kcycle", "slowdown", "load_to_use_cycles", "latency_cycles",
    "cycles_per_load", "median_cycles", "first_reread_cycles", "cycles", "max_lines_without_misses",
    "largest_footprint_without_misses", "bytes_per_second", "ops_per_cycle_per_sm", "l1d_bytes", "lines_held",
    "median_gbps", "gbps",
)
# Columns that number rows rather than measure: a byte column beside one is the better x.
INDEX_LIKE = ("loads", "step", "trial", "pair", "index", "level")
# Columns that name a variant (a method, a source, an instruction): lines or colours, not x.
CATEGORIES = ("series", "source", "method", "scope", "space", "op", "cluster", "launch", "segment")
MEASURED_ENDINGS = ("_median", "_cycles", "cycles", "_fraction", "_mean", "_rate", "_units", "gbps")
MAX_PANELS = 4
MAX_GROUPS = 10
SCATTER_ROWS = 400      # more rows than this: points, no lines
RASTER_ROWS = 1500      # more points than this: drawn as an image inside the SVG (small file)
SHORT_SWEEP = 4         # this many points or fewer: points, no line


def choose_x(series):
    """The first column that varies; a footprint growing with the row number rather than a row
    count; a column of four or more values rather than one of two or three (a setting)."""
    cols = series.columns
    if "chains" in cols and "loads_per_kcycle" in cols:
        return "chains"
    varying = [c for c in cols if series.varying(c)]
    if not varying:
        return cols[0]
    settings = [c for c in varying if c not in CATEGORIES] or varying
    first = settings[0]
    if first in INDEX_LIKE:
        byte_cols = [c for c in varying if c.endswith("_bytes") and _ascending(series.column(c))]
        if byte_cols:
            return byte_cols[0]
    if len(set(series.column(first))) <= 3:
        wider = [c for c in settings if not _measured(c) and len(set(series.column(c))) >= 4]
        if wider:
            return wider[0]
    return first


def _ascending(values):
    return all(a <= b for a, b in zip(values, values[1:]))


def _measured(column):
    """A measurement (median, cycles, fraction, rate), not a setting (size, count)."""
    return column.endswith(MEASURED_ENDINGS) or "_per_" in column


def choose_y(series, x):
    """A preferred column, else up to MAX_PANELS varying columns, measurements first; one
    column of two rows (a pair of values is not four curves)."""
    candidates = [c for c in series.columns if c != x and series.varying(c)]
    others = [c for c in series.columns if c != x]
    for pool in (candidates, others):  # a preferred column, even a flat one, says most
        for name in PREFERRED_Y:
            if name in pool:
                return [name]
    candidates.sort(key=lambda c: 0 if _measured(c) else 1)
    return candidates[:1 if len(series.rows) <= 2 else MAX_PANELS] or others[:1]


def choose_group(series, x, ys):
    """The settings (one or two columns) that, with x, tell rows apart: one line per value,
    when x repeats. Dense samples are coloured by their level."""
    xs = series.column(x)
    if len(xs) > SCATTER_ROWS and "level" in series.columns and x != "level" and "level" not in ys:
        if len(set(series.column("level"))) <= MAX_GROUPS:
            return ("level",)
    if len(set(xs)) == len(xs):
        return ()
    settings = [c for c in series.columns if c != x and c not in ys and series.varying(c) and not _measured(c)]
    tries = [(c,) for c in settings] + [(a, b) for i, a in enumerate(settings) for b in settings[i + 1:]]
    for group in tries:
        keys = list(zip(*(series.column(c) for c in group)))
        if len(set(keys)) <= MAX_GROUPS and len(set(zip(xs, keys))) == len(xs):
            return group
    for c in settings:  # repeated measurements: points coloured by their variant
        if c in CATEGORIES and len(set(series.column(c))) <= MAX_GROUPS:
            return (c,)
    return ()


def panel_groups(ys):
    """Columns sharing a last word (near_home_median, far_home_median) share one panel."""
    panels = {}
    for c in ys:
        panels.setdefault(c.rsplit("_", 1)[-1], []).append(c)
    return list(panels.values())


@dataclass
class Layout:
    x: str                # the column on x, or "row" (the row number) when x repeats unexplained
    xs: list
    ys: list
    group: tuple = ()     # the columns of which each line is one value
    points_only: bool = False


def layout(series, hint=None):
    """Axes and groups: what a lines hint names (plot_hints.py), the rest chosen from the data."""
    named = hint if hint and hint.kind == "lines" and columns_present(series, hint.x, hint.y, hint.group) else None
    x = named.x if named and named.x else choose_x(series)
    ys = [named.y] if named and named.y else choose_y(series, x)
    group = (named.group,) if named and named.group else choose_group(series, x, ys)
    chosen = not (named and (named.x or named.group))  # the probe's x and groups stand
    wider = len(group) == 1 and len(set(series.column(group[0]))) > len(set(series.column(x)))
    if chosen and wider and group[0] not in CATEGORIES:
        x, group = group[0], (x,)  # the column with more values reads better along x
    xs = series.column(x)
    unique = len(set(xs))
    repeats = unique < len(xs)
    if repeats and not group and unique <= 3 and len(xs) <= SCATTER_ROWS:  # pairs, trials: by row
        return Layout("row", list(range(len(xs))), ys, (), True)
    dense = len(xs) > SCATTER_ROWS
    if group:  # x repeating within one line: repeated measurements, drawn as points
        keys = list(zip(*(series.column(c) for c in group)))
        repeats = len(set(zip(xs, keys))) < len(xs)
    return Layout(x, xs, ys, group, repeats or x in INDEX_LIKE or dense or _names_only(ys))


def _names_only(ys):
    """y columns that name things (line numbers, SMs, IDs) rather than measure them: points,
    since a line from one ID to the next says nothing."""
    return not any(_measured(c) or c in PREFERRED_Y for c in ys)


def plot(series, topo):
    """A figure of `series`, and the number of markers drawn."""
    hint = hint_for(series)
    lay = layout(series, hint)
    panels = panel_groups(lay.ys)
    fig = Figure(figsize=(7.2, 2.2 + 1.9 * len(panels)))
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    markers = sum(_draw_panel(ax, series, topo, lay, columns, axes[-1], hint) for ax, columns in zip(axes, panels))
    axes[0].set_title(plain(_title(series, lay)), fontsize=9.5)
    for ax in axes[:-1]:
        ax.set_xlabel("")
    return fig, markers


def _draw_panel(ax, series, topo, lay, columns, last_ax, hint=None):
    entries = 0
    dense = len(lay.xs) > SCATTER_ROWS
    for column in columns:
        values = series.column(column)
        for label, idx in _groups(series, lay.group, hint):
            pts = sorted((lay.xs[i], values[i]) for i in idx)
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            name = " ".join(filter(None, [column if len(columns) > 1 else "", label]))
            style = dict(marker="o", markersize=1.5 if dense else 3.5, label=plain(name) if name else None)
            if lay.points_only or len(xs) <= SHORT_SWEEP:  # a line through 2-4 points suggests a curve
                if len(xs) <= SHORT_SWEEP:
                    style["markersize"] = 5
                ax.plot(xs, ys, linestyle="none", alpha=0.7, rasterized=len(xs) > RASTER_ROWS, **style)
            else:
                ax.plot(xs, ys, linewidth=1.3, **style)
            entries += 1 if name else 0
    ys_all = [v for c in columns for v in series.column(c)]
    set_axis(ax, "x", lay.x, lay.xs)
    set_axis(ax, "y", columns[0], ys_all, log_ratio=1000.0)
    markers = draw_markers(ax, topo, series, lay.x, columns[0], lay.xs, ys_all)
    finish_legend(ax, entries + markers, below=ax is last_ax)
    return markers


def _groups(series, group, hint=None):
    if not group:
        return [("", range(len(series.rows)))]
    keys = list(zip(*(series.column(c) for c in group)))
    out = []
    for key in sorted(set(keys)):
        label = ", ".join(value_name(hint, c, v) or f"{c.replace('_', ' ')} {v:g}" for c, v in zip(group, key))
        out.append((label, [i for i, k in enumerate(keys) if k == key]))
    return out


def _title(series, lay):
    what = ", ".join(c.replace("_", " ") for c in lay.ys)
    by = " by " + ", ".join(c.replace("_", " ") for c in lay.group) if lay.group else ""
    return f"{series.name}: {what} vs {lay.x.replace('_', ' ')}{by}"
