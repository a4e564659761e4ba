"""Readable values and axis labels from the unit a key or column name carries (docs/format.md:
units are in key names: _bytes, _cycles, _khz, _bits, _gbps, _s, ...)."""

import math

# Longest suffix first: "_bytes_per_second" before "_bytes".
_UNIT_SUFFIXES = (
    ("_bytes_per_second", "bytes_per_second"),
    ("_bytes_per_cycle_per_sm", "bytes_per_cycle"),
    ("_bytes_per_cycle", "bytes_per_cycle"),
    ("_ops_per_cycle_per_sm", "ops_per_cycle"),
    ("_loads_per_kcycle", "loads_per_kcycle"),
    ("_cycles", "cycles"),
    ("_bytes", "bytes"),
    ("_khz", "khz"),
    ("_bits", "bits"),
    ("_gbps", "gbps"),
    ("_percent", "percent"),
    ("_median", "cycles"),  # the median of fine-grained samples: hit_median, near_home_median
    ("_ns", "ns"),
    ("_s", "seconds"),
)

# Column names whose unit their whole name says (raw series columns are not always suffixed).
_WHOLE_NAME_UNITS = {
    "bytes": "bytes",
    "cycles": "cycles",
    "cycles_per_load": "cycles",
    "cycles_per_op": "cycles",
    "bytes_per_second": "bytes_per_second",
    "bytes_per_cycle": "bytes_per_cycle",
    "ops_per_cycle_per_sm": "ops_per_cycle",
    "loads_per_kcycle": "loads_per_kcycle",
    "largest_footprint_without_misses": "bytes",
    "span_bytes": "bytes",
    "median": "cycles",
    "gbps": "gbps",
}


def unit_of(name):
    """The unit family a key or column name carries ("bytes", "cycles", ...), or None."""
    if name in _WHOLE_NAME_UNITS:
        return _WHOLE_NAME_UNITS[name]
    for suffix, unit in _UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return None


def human_bytes(value):
    """262144 -> "256 KiB"; 1536 -> "1.5 KiB"; 100 -> "100 B"."""
    if value is None or not math.isfinite(value):
        return str(value)
    for factor, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if abs(value) >= factor:
            return f"{short_number(value / factor)} {name}"
    return f"{short_number(value)} B"


def human_rate(value, unit):
    """Bytes per second as GB/s or TB/s (decimal, as bandwidth is quoted)."""
    for factor, name in ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")):
        if abs(value) >= factor:
            return f"{short_number(value / factor)} {name}"
    return f"{short_number(value)} {unit}"


def short_number(value, digits=4):
    """At most `digits` significant digits, no exponent for ordinary sizes: 33.0 -> "33"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if abs(value) >= 1e12 or abs(value) < 1e-3:
        return f"{value:.{digits - 1}e}"
    text = f"{value:.{digits}g}"
    if "e" in text:  # 12345.6 at 4 digits: write it whole
        text = f"{value:.0f}"
    return text


def format_scalar(name, value):
    """One value of key `name`, readable: 262144 under size_bytes -> "256 KiB"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if not isinstance(value, (int, float)):
        return str(value)
    unit = unit_of(name)
    if unit == "bytes":
        return human_bytes(value)
    if unit == "bytes_per_second":
        return human_rate(value, "B/s")
    if unit == "khz":
        return f"{short_number(value / 1000)} MHz"
    suffix = {
        "cycles": "cycles", "bits": "bits", "gbps": "GB/s", "seconds": "s", "percent": "%",
        "bytes_per_cycle": "B/cycle", "ops_per_cycle": "ops/cycle", "loads_per_kcycle": "loads/kcycle",
    }.get(unit)
    return f"{short_number(value)} {suffix}" if suffix else short_number(value)


def format_value(name, value, limit=12):
    """A key's value readable; an array shows its first `limit` entries and how many more."""
    if isinstance(value, list):
        shown = ", ".join(format_scalar(name, v) for v in value[:limit])
        more = f", ... ({len(value)} in all)" if len(value) > limit else ""
        return f"[{shown}{more}]"
    return format_scalar(name, value)


# Each key's value as memtopo's own formatter shows it (its summary, the page's headline), where
# `memtopo report` made the page: the tables then say what the headline says.
_HOST_TEXTS = {}


def use_host_texts(texts):
    """Show each key of `texts` (key -> text) as given."""
    _HOST_TEXTS.clear()
    _HOST_TEXTS.update(texts)


def shown_value(full_name, value):
    """A key's whole value ("l1d.size_bytes"): memtopo's own text for it where given, else
    format_value."""
    return _HOST_TEXTS.get(full_name) or format_value(full_name.split(".")[-1], value)


def exact_text(value):
    """The value as stored, for a tooltip: 262144, 33.0, [1, 2]."""
    if isinstance(value, list):
        return "[" + ", ".join(exact_text(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def axis_label(column):
    """A column name as an axis label with its unit: "footprint_bytes" -> "footprint (bytes)"."""
    unit = unit_of(column)
    words = column
    for suffix, _ in _UNIT_SUFFIXES:
        if column.endswith(suffix) and column != suffix.lstrip("_") and suffix != "_median":
            words = column[: -len(suffix)]
            break
    words = words.replace("_", " ")
    label = {
        "bytes": "bytes", "cycles": "cycles", "bytes_per_second": "B/s", "bytes_per_cycle": "B/cycle",
        "ops_per_cycle": "ops/cycle/SM", "loads_per_kcycle": "loads/kcycle", "khz": "kHz", "percent": "%",
        "gbps": "GB/s", "ns": "ns", "seconds": "s",
    }.get(unit)
    if column == "gbps":
        return "bandwidth (GB/s)"
    # A name that is its unit ("cycles_per_load") says it already; a bare "median" does not.
    if label and (words.replace(" ", "_") != column or column.endswith("median")):
        return f"{words} ({label})"
    return words
