"""Plots for series a line plot would hide: bandwidth surfaces as heat maps, the latency
spectrum as a histogram, instruction rooflines as curves per ILP with peak and ridge."""

import math
import re

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from axes import MARKER_COLORS, finish_legend, set_axis
from markers import SPECTRUM_PROBE, spectrum_level_markers
from units import human_rate, short_number

STREAM_COLUMNS = ("blocks_per_sm", "threads", "bytes_per_second")
# occupancy-roofline's `op` column (plugins/occupancy-roofline/roofline_analysis.hpp, enum Op;
# tests/occupancy-roofline/test_roofline_model.cpp keeps the two in step).
ROOFLINE_OPS = ("ffma", "dfma", "imad", "sfu", "hfma2", "hfma2_bf16", "cvt", "shared_load", "global_load_l1",
                "global_load_l2", "global_load_dram")


def is_wide(draw):
    """Plots that take the page's whole width (a grid of panels)."""
    return draw is plot_roofline


def special_plot(series):
    """The function that plots `series`, or None for the generic plot."""
    cols = series.columns
    if series.probe == "global-throughput/streams" and all(c in cols for c in STREAM_COLUMNS):
        return plot_stream_surface
    if series.name == "histogram" and cols[:2] == ["cycles", "loads"]:
        return plot_histogram
    if all(c in cols for c in ("op", "warps", "ilp", "ops_per_cycle_per_sm")):
        return plot_roofline
    if series.probe == SPECTRUM_PROBE and series.name == "levels" and "latency_cycles" in cols and "share" in cols:
        return plot_spectrum_levels
    return None


def _key_value(topo, element, key):
    info = topo.elements.get(element, {}).get(key) if topo else None
    return info.value if info else None


def _config_cell(config):
    """"4 blocks per SM x 256 threads, ..." -> (4, 256)."""
    m = re.match(r"\s*(\d+) blocks? per SM x (\d+) threads", config or "")
    return (float(m.group(1)), float(m.group(2))) if m else None


def plot_stream_surface(series, topo):
    """Best bytes/s over ILP and access width for each (blocks per SM, threads) cell."""
    blocks, threads, rates = (series.column(c) for c in STREAM_COLUMNS)
    rows, cols = sorted(set(blocks)), sorted(set(threads))
    grid = np.full((len(rows), len(cols)), np.nan)
    for b, t, r in zip(blocks, threads, rates):
        i, j = rows.index(b), cols.index(t)
        grid[i, j] = r if math.isnan(grid[i, j]) else max(grid[i, j], r)
    fig = Figure(figsize=(7.2, 1.9 + 0.45 * len(rows)))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid / 1e9), cmap="viridis", aspect="auto", origin="lower",
                      vmin=0, vmax=np.nanmax(grid) / 1e9)  # from zero: a flat surface looks flat
    bar = fig.colorbar(image, ax=ax, label="best GB/s over ILP and width")
    bar.formatter.set_useOffset(False)
    ax.grid(False)
    ax.set_xticks(range(len(cols)), [short_number(c) for c in cols])
    ax.set_yticks(range(len(rows)), [short_number(r) for r in rows])
    ax.set_xlabel("threads per block")
    ax.set_ylabel("blocks per SM")
    _annotate_cells(ax, grid)
    entries = _mark_configs(ax, topo, series.name, rows, cols)
    ax.set_title(f"{series.name}: bandwidth surface (best {human_rate(np.nanmax(grid), 'B/s')})", fontsize=9.5)
    finish_legend(ax, entries)
    return fig, entries


def _annotate_cells(ax, grid):
    top = np.nanmax(grid)
    for (i, j), v in np.ndenumerate(grid):
        if not math.isnan(v):
            ax.text(j, i, short_number(v / 1e9, 3), ha="center", va="center", fontsize=7,
                    color="black" if v > 0.6 * top else "white")


def _mark_configs(ax, topo, stem, rows, cols):
    """Outlines the best cell and the fewest-bytes-in-flight cell within 95 % (throughput.<stem>_*_config)."""
    entries = 0
    for suffix, color, what in (("best_config", "#d62728", "best"), ("min95_config", "#ff7f0e", "fewest in flight within 95 %")):
        key = f"{stem.replace('-', '_')}_{suffix}"
        cell = _config_cell(_key_value(topo, "throughput", key))
        if not cell or cell[0] not in rows or cell[1] not in cols:
            continue
        i, j = rows.index(cell[0]), cols.index(cell[1])
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor=color, linewidth=2.2 - entries * 0.6,
                               label=f"{what}: throughput.{key}"))
        entries += 1
    return entries


def plot_histogram(series, topo):
    """Loads per latency, the spectrum's levels marked."""
    cycles, loads = series.column("cycles"), series.column("loads")
    fig = Figure(figsize=(7.2, 3.4))
    ax = fig.subplots()
    width = max(1.0, (max(cycles) - min(cycles)) / 150.0)
    ax.bar(cycles, loads, width=width, color="#1f77b4", label="loads", zorder=3)
    set_axis(ax, "x", "cycles", cycles, log_ratio=1e9)
    set_axis(ax, "y", "loads", loads, log_ratio=100.0)
    ax.set_xlabel("sample latency (cycles, timing cost included)")
    markers = spectrum_level_markers(topo, min(cycles) - width, max(cycles) + width)
    for i, m in enumerate(markers):
        ax.axvline(m.value, color=MARKER_COLORS[i % len(MARKER_COLORS)], linestyle="--", linewidth=1, label=m.label,
                   zorder=2)
    ax.set_title(f"{series.name}: loads per latency", fontsize=9.5)
    finish_legend(ax, 1 + len(markers))
    return fig, len(markers)


def plot_spectrum_levels(series, topo):
    """The levels the spectrum found: load-to-use latency per level, named, with its share of loads."""
    names = _key_value(topo, "spectrum", "level_names") or []
    latencies, shares = series.column("latency_cycles"), series.column("share")
    labels = [names[i] if i < len(names) else f"level {i}" for i in range(len(latencies))]
    fig = Figure(figsize=(7.2, 3.2))
    ax = fig.subplots()
    bars = ax.bar(range(len(latencies)), latencies, color="#1f77b4", zorder=3)
    for bar, share in zip(bars, shares):
        ax.annotate(f"{share * 100:.1f} %", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right")
    ax.set_ylabel("load-to-use latency (cycles)")
    ax.set_ylim(0, max(latencies) * 1.12)
    ax.set_title(f"{series.name}: latency per level (share of the loads above each bar)", fontsize=9.5)
    return fig, 0


def plot_roofline(series, topo):
    """Per instruction type: ops per cycle per SM vs warps per SM, one curve per ILP, peak and ridge."""
    ops = sorted(set(series.column("op")))
    ncols = min(3, len(ops))
    nrows = math.ceil(len(ops) / ncols)
    fig = Figure(figsize=(4.4 * ncols, 2.8 * nrows + 0.7))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    markers = 0
    for ax, op in zip(axes.flat, ops):
        markers += _roofline_panel(ax, series, topo, int(op))
    for ax in list(axes.flat)[len(ops):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=6, fontsize=7.5, frameon=False)
    fig.suptitle(f"{series.name}: thread instructions per cycle per SM vs warps per SM", fontsize=9.5)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return fig, markers


def _roofline_panel(ax, series, topo, op):
    name = ROOFLINE_OPS[op] if 0 <= op < len(ROOFLINE_OPS) else f"op {op}"
    rows = [r for r in zip(series.column("op"), series.column("warps"), series.column("ilp"),
                           series.column("ops_per_cycle_per_sm")) if r[0] == op]
    for ilp in sorted(set(r[2] for r in rows)):
        pts = sorted((r[1], r[3]) for r in rows if r[2] == ilp)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=2.5, linewidth=1.1,
                label=f"ILP {ilp:g}")
    warps = [r[1] for r in rows]
    set_axis(ax, "x", "warps", warps, log_ratio=4)
    ax.set_ylabel("ops/cycle/SM")
    ax.set_title(name, fontsize=8.5)
    drawn = 0
    peak = _key_value(topo, "roofline", f"{name}_peak_ops_per_cycle_per_sm")
    if isinstance(peak, (int, float)):
        ax.axhline(peak, color="#d62728", linestyle="--", linewidth=1)
        ax.annotate(f"peak {short_number(peak)}", (0.01, peak), xycoords=("axes fraction", "data"),
                    fontsize=7, color="#d62728", va="bottom")
        drawn += 1
    ridge = _key_value(topo, "roofline", f"{name}_ridge_warps_per_sm")
    if isinstance(ridge, (int, float)) and min(warps) <= ridge <= max(warps):
        ridge_ilp = _key_value(topo, "roofline", f"{name}_ridge_ilp")
        ax.axvline(ridge, color="#9467bd", linestyle=":", linewidth=1.2)
        ax.annotate(f"ridge {ridge:g} warps, ILP {ridge_ilp}", (ridge, 0.04), xycoords=("data", "axes fraction"),
                    fontsize=7, color="#9467bd", rotation=90, ha="right", va="bottom")
        drawn += 1
    return drawn
