"""Read memtopo GPU memory topologies (docs/python.md).

A topology file (docs/format.md) holds [meta], [device], one table per memory element
(l1d, l2, tlb, ...), [provenance.<element>] with one entry per value (probe, confidence,
bound, note), [probes."<name>"] with each probe's status, and, in a replayed or simulated
description, [sim]. `load` reads the TOML `memtopo run` writes or its JSON form.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

__all__ = ["Topology", "load", "loads", "unit_of_key", "to_frame", "ROW_FIELDS"]
__version__ = "0.1.0"

# The tables that are not memory elements (docs/format.md).
_NOT_ELEMENTS = ("meta", "provenance", "probes", "sim")
# Units are in key names (docs/format.md, "Units"); the same rules as the host's unit_of_key.
_UNITS = ("bytes", "bits", "khz", "cycles", "gbps", "s")
# The columns of `memtopo export --format csv`.
ROW_FIELDS = ("element", "key", "value", "unit", "bound", "confidence", "probe", "note")


def unit_of_key(key: str) -> str:
    """The unit a key's name carries ('bytes' for l1d.size_bytes), or '' when it has none."""
    for unit in _UNITS:
        if key.endswith("_" + unit):
            return unit
    return ""


def _flat(table: dict, prefix: str = "") -> Iterable[tuple[str, Any]]:
    for k, v in table.items():
        if isinstance(v, dict):
            yield from _flat(v, prefix + k + ".")
        else:
            yield prefix + k, v


@dataclass
class Topology:
    """One topology: the parsed tables, with lookups by dotted key ('l2.size_bytes')."""

    tables: dict
    source: str = ""
    _values: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.tables.get("meta"), dict):
            raise ValueError(f"{self.source or 'topology'}: no [meta] table; not a topology file written by memtopo "
                             "(a simulated device description? memtopo validate says)")
        self._values = {}
        for element in self.elements:
            for key, value in _flat(self.tables[element]):
                self._values[element + "." + key] = value

    @property
    def meta(self) -> dict:
        return self.tables["meta"]

    @property
    def device(self) -> dict:
        return self.tables.get("device", {})

    @property
    def elements(self) -> list[str]:
        """Element tables in file order (device included), without meta, provenance, probes, sim."""
        return [k for k, v in self.tables.items() if k not in _NOT_ELEMENTS and isinstance(v, dict)]

    @property
    def probes(self) -> dict:
        """Each probe's record: version, status, reason, duration_s."""
        return self.tables.get("probes", {})

    def keys(self) -> list[str]:
        """Every measured value's dotted key ('l2.size_bytes')."""
        return list(self._values)

    def value(self, key: str, default: Any = None) -> Any:
        """The value of a dotted key ('l2.size_bytes'), or `default` when the file lacks it."""
        return self._values.get(key, default)

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise KeyError(f"{key}: not in {self.source or 'this topology'}")
        return self._values[key]

    def __contains__(self, key: str) -> bool:
        return key in self._values

    def provenance(self, key: str) -> dict:
        """Where a value comes from: probe, confidence, bound, note (and estimate, varies); {} if none."""
        element, _, rest = key.partition(".")
        return dict(self.tables.get("provenance", {}).get(element, {}).get(rest, {}))

    def unit(self, key: str) -> str:
        return unit_of_key(key)

    def rows(self) -> list[dict]:
        """One dict per value, as `memtopo export --format csv` writes its rows (typed values)."""
        out = []
        for element in self.elements:
            for key, value in _flat(self.tables[element]):
                p = self.provenance(element + "." + key)
                out.append({"element": element, "key": key, "value": value, "unit": unit_of_key(key),
                            "bound": p.get("bound", ""), "confidence": p.get("confidence"),
                            "probe": p.get("probe", ""), "note": p.get("note", "")})
        return out


def loads(text: str, fmt: str = "toml", source: str = "") -> Topology:
    """A topology from text: fmt 'toml' or 'json'."""
    if fmt == "toml":
        tables = tomllib.loads(text)
    elif fmt == "json":
        tables = json.loads(text)
    else:
        raise ValueError(f"format {fmt!r}: use 'toml' or 'json'")
    return Topology(tables, source)


def load(path: str | Path) -> Topology:
    """A topology file: JSON when its name ends in .json, TOML otherwise."""
    path = Path(path)
    fmt = "json" if path.suffix == ".json" else "toml"
    try:
        return loads(path.read_text(encoding="utf-8"), fmt, str(path))
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not valid {fmt.upper()}: {e}") from e


def to_frame(topologies: Topology | Iterable[Topology]):
    """A pandas DataFrame of the rows of one or several topologies, with columns `source`
    (the file), `gpu` (device.name) and `uuid` (device.uuid) in front of ROW_FIELDS."""
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("memtopo.to_frame needs pandas: pip install 'memtopo[pandas]' (or pandas); "
                          "Topology.rows() gives the same rows as dicts without it") from e
    if isinstance(topologies, Topology):
        topologies = [topologies]
    records = []
    for t in topologies:
        for row in t.rows():
            records.append({"source": t.source, "gpu": t.device.get("name", ""), "uuid": t.device.get("uuid", ""),
                            **row})
    return pd.DataFrame.from_records(records, columns=["source", "gpu", "uuid", *ROW_FIELDS])
