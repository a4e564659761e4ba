"""Which of a probe's results are drawn on a plot of its series: byte- and cycle-valued keys
(and keys named after an axis' column) whose value falls in that axis' range, as vertical lines
(x) or horizontal lines (y), labelled with the key (docs/report.md, "Markers")."""

from dataclasses import dataclass

from units import format_value, unit_of

MAX_MARKERS = 8
MAX_LABEL = 90  # characters of a legend entry
# Axis columns that count what a key of this suffix counts.
_COUNT_ALIASES = {"pages": ("_entries",), "lines": ("_lines",), "warps": ("_warps_per_sm",), "chains": ("_loads_in_flight",)}


@dataclass
class Marker:
    value: float
    label: str


def numeric_values(info):
    """(label, value) of a key's numbers: a scalar, or each entry of a short array."""
    value = info.value
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [(info.full_name, float(value))]
    if isinstance(value, list) and 0 < len(value) <= MAX_MARKERS and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [(f"{info.full_name}[{i}]", float(v)) for i, v in enumerate(value)]
    return []


def candidate_keys(topo, series):
    """The probe's keys; those named after the series (series "sm_dram": keys "<element>.sm_dram_*") when any are."""
    keys = topo.keys_by_probe.get(series.probe, []) if topo else []
    stem = series.name.replace("-", "_")
    named = [k for k in keys if k.key.startswith(stem + "_")]
    return named or keys


def matches_axis(key, column):
    """A key belongs on the axis of `column`: the same unit, the column's name as its ending,
    or a count the column counts (tlb.l1_entries on an axis of pages)."""
    if "_" in column and (key.endswith("_" + column) or key == column):  # "sm" alone would match too much
        return True
    if any(key.endswith(s) for s in _COUNT_ALIASES.get(column, ())):
        return True
    unit = unit_of(column)
    return unit in ("bytes", "cycles", "bytes_per_second") and unit_of(key) == unit


def markers_for(topo, series, column, lo, hi):
    """The markers for an axis showing `column` over [lo, hi], merged where values coincide."""
    span = (hi - lo) or abs(hi) or 1.0
    found = {}
    for info in candidate_keys(topo, series):
        if not matches_axis(info.key, column):
            continue
        for label, value in numeric_values(info):
            if lo - 0.02 * span <= value <= hi + 0.02 * span:
                text = f"{label} = {_bound(info)}{format_value(info.key, value)}"[:MAX_LABEL]
                found.setdefault(value, []).append(text)
    merged = [Marker(v, _join(labels)) for v, labels in sorted(found.items())]
    return merged[:MAX_MARKERS]


def _join(labels):
    text = "; ".join(labels)
    return text if len(text) <= MAX_LABEL else labels[0] + f" (and {len(labels) - 1} more)"


def _bound(info):
    return {"at_least": "≥ ", "at_most": "≤ "}.get(info.bound, "")
