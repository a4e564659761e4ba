"""What a probe declares about drawing its series (mt_series_desc, written by the host as
<raw-dir>/<plugin>__<probe>/plots.json; docs/report.md, "Plot hints"): the plot kind, its axes,
names of bars or panels and the results marked on it. Nothing here knows any probe."""

import json
import os
import re
from dataclasses import dataclass

_cache = {}


@dataclass
class Hint:
    kind: str = "lines"
    x: str = ""
    y: str = ""
    value: str = ""
    group: str = ""
    panel: str = ""
    annotate: str = ""
    labels: str = ""
    marks: str = ""


@dataclass
class Mark:
    where: str   # "x", "y" or "cell"
    key: str     # "element.key", {series} and {panel} substituted
    names: str   # "element.key" of a string array naming an array's values, or ""


def hint_for(series):
    """The hint for `series` (its own name first, then "*"), or None."""
    folder = os.path.dirname(series.path)
    if folder not in _cache:
        _cache[folder] = _read(os.path.join(folder, "plots.json"))
    plots = _cache[folder]
    for wanted in (series.name, "*"):
        for p in plots:
            if p.get("series") == wanted:
                return Hint(**{k: str(p.get(k, "")) for k in Hint.__dataclass_fields__})
    return None


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    plots = data.get("plots") if isinstance(data, dict) else None
    return [p for p in plots if isinstance(p, dict)] if isinstance(plots, list) else []


def columns_present(series, *names):
    return all(n in series.columns for n in names if n)


def key_value(topo, path):
    """The value of "element.key" in the topology, or None."""
    element, _, key = path.partition(".")
    info = topo.elements.get(element, {}).get(key) if topo and key else None
    return info.value if info else None


def column_labels(hint):
    """{column: [name of value 0, 1, ...]} of a "column=a,b;other=c,d" list, else {}."""
    parts = [p for p in hint.labels.split(";") if p.strip()] if hint else []
    if not parts or not all("=" in p for p in parts):
        return {}
    out = {}
    for part in parts:
        column, _, names = part.partition("=")
        out[column.strip()] = names.split(",")
    return out


def value_name(hint, column, value):
    """The hint's name of one value of `column` ("bulk" for method 0), or None."""
    names = column_labels(hint).get(column, [])
    if isinstance(value, float) and value.is_integer() and 0 <= value < len(names):
        return names[int(value)]
    return None


def labels(hint, topo, count, column=""):
    """Names of values 0 .. count-1: the names `column` has in a per-column list, the hint's
    list, or a string array of the topology."""
    by_column = column_labels(hint)
    if by_column:
        names = by_column.get(column, [])
    elif hint.labels.startswith("@"):
        names = key_value(topo, hint.labels[1:]) or []
    else:
        names = [n for n in hint.labels.split(",")] if hint.labels else []
    return [str(names[i]) if i < len(names) and isinstance(names[i], str) else f"{i}" for i in range(count)]


def marks(hint, series_name, panel=""):
    out = []
    for part in hint.marks.split(";"):
        where, _, key = part.strip().partition(":")
        if where not in ("x", "y", "cell") or not key:
            continue
        key, _, names = key.partition("@")
        key = key.replace("{series}", series_name.replace("-", "_")).replace("{panel}", panel)
        out.append(Mark(where, key, names))
    return out


def numbers_of(text):
    """The numbers in a setting's text ("4 blocks per SM x 256 threads, ..." -> [4.0, 256.0, ...])."""
    return [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text or "")]
