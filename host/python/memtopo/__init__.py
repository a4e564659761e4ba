"""Read memtopo GPU memory topologies (docs/python.md).

A topology file (docs/format.md) holds [meta], [device], one table per memory element
(l1d, l2, tlb, ...), [provenance.<element>] with one entry per value (probe, confidence,
bound, note), [probes."<name>"] with each probe's status, and, in a replayed or simulated
description, [sim]. `load` reads the TOML `memtopo run` writes or its JSON form.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

__all__ = ["Topology", "load", "loads", "is_json", "unit_of_key", "to_frame", "ROW_FIELDS"]
__version__ = "0.1.0"

# The tables that are not memory elements (docs/format.md).
_NOT_ELEMENTS = ("meta", "provenance", "probes", "sim")
# What `load` reads at most, as the C++ reader (docs/host.md, "Guarantees": unbounded input).
MAX_FILE_BYTES = 64 << 20
# Tables nest a few levels in a topology (provenance.<element>.<key>); deeper is no topology.
MAX_DEPTH = 64
# Units are in key names (docs/format.md, "Units"); the same rules as the host's unit_of_key:
# compound suffixes first (a _bytes_per_second rate is no count of bytes), then the plain ones.
_COMPOUND_UNITS = (("_bytes_per_second", "B/s"), ("_bytes_per_cycle_per_sm", "B/cycle/SM"),
                   ("_bytes_per_cycle", "B/cycle"), ("_ops_per_cycle_per_sm", "ops/cycle/SM"),
                   ("_loads_per_kcycle", "loads/kcycle"), ("_warps_per_sm", "warps/SM"),
                   ("_fraction_of_theoretical", "fraction"), ("_fractions", "fraction"),
                   ("_fraction", "fraction"), ("_shares", "fraction"), ("_share", "fraction"),
                   ("_percent", "%"))
_UNITS = ("bytes", "bits", "khz", "cycles", "gbps", "s")
# The columns of `memtopo export --format csv`.
ROW_FIELDS = ("element", "key", "value", "unit", "bound", "confidence", "probe", "note")


def unit_of_key(key: str) -> str:
    """The unit a key's name carries ('bytes' for l1d.size_bytes, 'B/s' for a _bytes_per_second
    rate), or '' when it has none."""
    for suffix, unit in _COMPOUND_UNITS:
        if key.endswith(suffix):
            return unit
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
        _check_shape(self.tables, self.source or "topology")
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


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in `value` (iterative: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if d <= MAX_DEPTH:
                stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def _need_table(value: Any, where: str, source: str) -> None:
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise ValueError(f"{source}: {where}: a {kind} where a table is expected; not a topology file written by "
                         "memtopo (memtopo validate says what is wrong)")


def _check_shape(tables: Any, source: str) -> None:
    """The tables memtopo's readers rely on are tables (ValueError naming the key path, never
    AttributeError later); nesting is bounded."""
    _need_table(tables, "the document", source)
    if _depth(tables) > MAX_DEPTH:
        raise ValueError(f"{source}: tables or arrays nest deeper than {MAX_DEPTH} levels; no topology does")
    for name in ("meta", "device", "probes", "provenance", "sim"):
        if name in tables:
            _need_table(tables[name], f"[{name}]", source)
    for name, probe in tables.get("probes", {}).items():
        _need_table(probe, f'[probes."{name}"]', source)
    for element, keys in tables.get("provenance", {}).items():
        _need_table(keys, f"[provenance.{element}]", source)
        for key, entry in keys.items():
            _need_table(entry, f"provenance.{element}.{key}", source)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} (JSON has no {name}; a topology holds finite numbers only)")


def _first_unreadable(value: Any, path: str = "") -> str | None:
    """Where `value` holds what no topology holds, as "KEY PATH: why", or None (iterative): a
    NaN or an infinity (TOML has them, a topology never), a null (TOML has none)."""
    stack = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return f"{p or '/'}: {v} is not a finite number; a topology holds finite numbers only"
        if v is None:
            return f"{p or '/'}: null (TOML has no null); remove the key"
        if isinstance(v, dict):
            stack.extend((c, f"{p}/{k}") for k, c in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((c, f"{p}/{i}") for i, c in reversed(list(enumerate(v))))
    return None


def is_json(text: str) -> bool:
    """Whether `text` is a topology's JSON form rather than TOML, as the C++ reader decides: its
    first character past white space (and a byte order mark) is '{'."""
    return text.lstrip("\ufeff").lstrip(" \t\r\n").startswith("{")


def loads(text: str, fmt: str = "", source: str = "") -> Topology:
    """A topology from text: fmt 'toml' or 'json', or '' to tell them apart as `memtopo` does
    (is_json). A leading byte order mark is skipped. Anything that is not a topology raises
    ValueError (syntax, NaN or an infinity anywhere, a non-table where a table belongs, nesting
    deeper than MAX_DEPTH)."""
    if fmt not in ("", "toml", "json"):
        raise ValueError(f"format {fmt!r}: use 'toml' or 'json'")
    text = text[1:] if text.startswith("\ufeff") else text
    fmt = fmt or ("json" if is_json(text) else "toml")
    try:
        tables = tomllib.loads(text) if fmt == "toml" else json.loads(text, parse_constant=_no_constant)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{source or 'text'}: not valid {fmt.upper()}: {e}") from e
    except ValueError as e:  # a NaN or Infinity literal
        raise ValueError(f"{source or 'text'}: not valid JSON: {e}") from e
    except RecursionError as e:
        raise ValueError(f"{source or 'text'}: nests too deeply to read; no topology does") from e
    if isinstance(tables, dict) and (problem := _first_unreadable(tables)) is not None:
        raise ValueError(f"{source or 'text'}: {problem}")
    return Topology(tables, source)


def _read_bounded(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES, as the C++ reader: a FIFO, a
    device, a folder or a larger file is refused before it is read, never opened to block."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from e
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file"
        raise ValueError(f"{path}: {kind}; name a topology file")
    if st.st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path}: {st.st_size} bytes, over the {MAX_FILE_BYTES} a topology may have")
    # O_NONBLOCK: a path swapped for a FIFO after the check does not block the open.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: changed into something other than a regular file while opened")
        chunks, total = [], 0
        while total <= MAX_FILE_BYTES:
            chunk = os.read(fd, min(1 << 20, MAX_FILE_BYTES + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    finally:
        os.close(fd)
    if total > MAX_FILE_BYTES:
        raise ValueError(f"{path}: grew past the {MAX_FILE_BYTES} bytes a topology may have while read")
    return b"".join(chunks)


def load(path: str | Path) -> Topology:
    """A topology file, TOML or its JSON form told apart by content as `memtopo` does (the
    name's extension does not matter). Only a regular file of at most MAX_FILE_BYTES is read;
    anything else raises ValueError naming the file."""
    path = Path(path)
    data = _read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 (byte {e.start}); not a topology file") from e
    return loads(text, "", str(path))


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
