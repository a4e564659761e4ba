"""Axis scales, tick labels and markers shared by every plot: log2 axes for sweeps over powers
of two, byte axes in KiB/MiB, rates in GB/s, markers as dashed lines named in the legend."""

import math

from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, MultipleLocator

from figure_text import plain
from markers import markers_for
from units import axis_label, human_bytes, short_number, unit_of

MARKER_COLORS = ("#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#ff7f0e", "#7f7f7f")


def wants_log(values, ratio=16.0):
    """Positive values spanning `ratio` or more."""
    positive = [v for v in values if v is not None]
    return bool(positive) and min(positive) > 0 and max(positive) / min(positive) >= ratio


def powers_of_two(values):
    """Most distinct values powers of two (a sweep that doubles: strides, warps, chains)."""
    distinct = set(v for v in values if v is not None and v > 0)
    doubling = sum(1 for v in distinct if float(v).is_integer() and (int(v) & (int(v) - 1)) == 0)
    return bool(distinct) and doubling >= 0.5 * len(distinct)


def _tick_text(column):
    unit = unit_of(column)
    if unit == "bytes":
        return lambda v, _pos: human_bytes(v)
    if unit == "bytes_per_second":
        return lambda v, _pos: f"{short_number(v / 1e9)} GB/s"
    return lambda v, _pos: short_number(v)


def set_axis(ax, which, column, values, log_ratio=16.0):
    """Label, scale and tick format of one axis showing `column`."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(plain(axis_label(column)))
    doubling = unit_of(column) == "bytes" or powers_of_two(values) or wants_log(values, 1000.0)
    if wants_log(values, log_ratio) and (which == "y" or doubling):
        base = 2 if which == "x" or unit_of(column) == "bytes" else 10
        (ax.set_xscale if which == "x" else ax.set_yscale)("log", base=base)
        axis.set_major_locator(LogLocator(base=base, numticks=9))
    elif unit_of(column) == "bytes" and finite(values):
        axis.set_major_locator(_byte_locator(min(values), max(values)))
    else:
        whole = all(float(v).is_integer() for v in finite(values))
        axis.set_major_locator(MaxNLocator(nbins=7, integer=whole))
        if which == "y":
            _keep_scale(ax, finite(values))
    axis.set_major_formatter(FuncFormatter(_tick_text(column)))


def _keep_scale(ax, values, least=0.02):
    """A y-axis spanning at least `least` of the values' magnitude: 1926 to 1928 lines drawn on
    1907 to 1946, so that a dip of one line in 1928 does not look like a cliff."""
    if not values:
        return
    lo, hi = min(values), max(values)
    magnitude = max(abs(lo), abs(hi))
    if magnitude == 0:  # all zero: from zero up, not a band of +-0.04 around it
        ax.set_ylim(0, 1)
    elif hi - lo < least * magnitude:
        mid = (hi + lo) / 2
        ax.set_ylim(mid - least * magnitude / 2, mid + least * magnitude / 2)


def _byte_locator(lo, hi):
    """Ticks at multiples of a power of two: 2 KiB, 2.5 KiB, 3 KiB rather than 1.953 KiB."""
    span = hi - lo
    if span <= 0:
        return MaxNLocator(nbins=7)
    step = 2 ** math.floor(math.log2(span / 4))
    return MultipleLocator(max(step, 1))


def draw_markers(ax, topo, series, x_column, y_column, xs, ys):
    """Dashed lines at the probe's results in range: vertical on x, horizontal on y. Returns how many."""
    drawn = 0
    x_markers = markers_for(topo, series, x_column, min(xs), max(xs))
    y_markers = markers_for(topo, series, y_column, min(ys), max(ys)) if y_column else []
    for i, m in enumerate(x_markers + y_markers):
        color = MARKER_COLORS[i % len(MARKER_COLORS)]
        line = ax.axvline if i < len(x_markers) else ax.axhline
        line(m.value, color=color, linestyle="--", linewidth=1.1, label=plain(m.label))
        drawn += 1
    return drawn


def finish_legend(ax, entries, below=True):
    """A legend below the axes when there is anything to name (labels never cover the data);
    inside an upper panel, where below would cover the next one."""
    if entries <= 0:
        return
    if not below:
        ax.legend(loc="best", fontsize=7.5, framealpha=0.85)
        return
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=1 if entries > 3 else min(entries, 2),
              fontsize=7.5, frameon=False)


def finite(values):
    return [v for v in values if v is not None and math.isfinite(v)]
