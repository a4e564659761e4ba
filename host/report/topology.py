"""The topology file as the report reads it: element tables, per-key provenance, probe
outcomes (docs/format.md)."""

import json
import os
import stat
import tomllib
from dataclasses import dataclass, field

# Tables that are not memory elements.
NON_ELEMENT_TABLES = ("meta", "provenance", "probes", "sim")


class InputError(Exception):
    """Input the report cannot use: exit 2 with the message."""


@dataclass
class KeyInfo:
    element: str
    key: str
    value: object
    probe: str = ""          # "plugin/probe"
    confidence: float = None
    bound: str = ""          # exact | at_least | at_most
    note: str = ""

    @property
    def full_name(self):
        return f"{self.element}.{self.key}"


@dataclass
class ProbeInfo:
    name: str                # "plugin/probe"
    status: str = ""
    reason: str = ""
    version: str = ""
    duration_s: float = None
    options: dict = None     # [probes."..".options]: the options the run set otherwise than the defaults

    @property
    def raw_folder(self):
        """The --raw-dir folder of this probe's series: "plugin__probe"."""
        return self.name.replace("/", "__", 1)


@dataclass
class Topology:
    path: str
    meta: dict
    elements: dict                       # element -> {key: KeyInfo}, file order
    probes: dict                         # "plugin/probe" -> ProbeInfo
    keys_by_probe: dict = field(default_factory=dict)  # "plugin/probe" -> [KeyInfo]

    @property
    def device(self):
        return self.elements.get("device", {})

    def device_value(self, key, default=""):
        info = self.device.get(key)
        return info.value if info else default


# The most bytes an input may hold, as for every memtopo reader (docs/host.md, "Guarantees").
MAX_INPUT_BYTES = 64 << 20


def read_input_bytes(path, what):
    """The bytes of a regular file of at most MAX_INPUT_BYTES; OSError-free: InputError says why."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; name {what}")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}; name {what}")
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: is a folder; name {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path}: is not a regular file (a FIFO or a device); name {what}")
    if st.st_size > MAX_INPUT_BYTES:
        raise InputError(f"{path}: is larger than the {MAX_INPUT_BYTES >> 20} MiB an input may have; name {what}")
    try:
        with open(path, "rb") as f:
            return f.read(MAX_INPUT_BYTES + 1)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")


def _no_json_constant(name):
    raise ValueError(f"{name} is no JSON value (a topology holds finite numbers only)")


def load(path):
    """Reads and organises `path`; InputError when it cannot, or when it holds nothing to report."""
    data = read_input_bytes(path, "a topology file written by `memtopo run`")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: is not UTF-8 text; name a topology file written by `memtopo run`")
    text = text[1:] if text.startswith("\ufeff") else text
    # The JSON form (`run --format json`) as every command tells it apart: by content.
    if text.lstrip(" \t\r\n").startswith("{"):
        try:
            root = json.loads(text, parse_constant=_no_json_constant)
        except ValueError as e:  # json.JSONDecodeError included
            raise InputError(f"{path}: not valid JSON: {e}")
    else:
        try:
            root = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"{path}: TOML syntax error: {e}")
    if not isinstance(root.get("meta"), dict):
        hint = (" (it looks like a simulated device description: `memtopo run --device sim:FILE` measures it)"
                if "device" in root else "")
        raise InputError(f"{path}: has no [meta] table, so it is not a topology written by `memtopo run`{hint}")
    topo = _organise(path, root)
    if not any(topo.elements.values()):
        raise InputError(f"{path}: holds no measured values (no element table has a key); nothing to report")
    return topo


def _organise(path, root):
    provenance = root.get("provenance", {})
    elements = {}
    for name, table in root.items():
        if name in NON_ELEMENT_TABLES or not isinstance(table, dict):
            continue
        elements[name] = {k: _key_info(name, k, v, provenance.get(name, {}).get(k)) for k, v in table.items()}
    probes = {n: _probe_info(n, t) for n, t in root.get("probes", {}).items() if isinstance(t, dict)}
    topo = Topology(path, root.get("meta", {}), elements, probes)
    for keys in elements.values():
        for info in keys.values():
            if info.probe:
                topo.keys_by_probe.setdefault(info.probe, []).append(info)
    return topo


def _key_info(element, key, value, prov):
    info = KeyInfo(element, key, value)
    if isinstance(prov, dict):
        info.probe = str(prov.get("probe", ""))
        info.confidence = prov.get("confidence")
        info.bound = str(prov.get("bound", ""))
        info.note = str(prov.get("note", ""))
    return info


def _probe_info(name, table):
    options = table.get("options")
    return ProbeInfo(name, str(table.get("status", "")), str(table.get("reason", "")),
                     str(table.get("version", "")), table.get("duration_s"),
                     dict(options) if isinstance(options, dict) else {})


def probe_elements(topo, probe_name):
    """The elements a probe relates to, most keys first: those it provided keys to, else the
    element its name starts with ("plugin/l2-levels" -> l2), for probes that stored none."""
    counts = {}
    for info in topo.keys_by_probe.get(probe_name, []):
        counts[info.element] = counts.get(info.element, 0) + 1
    if counts:
        order = list(topo.elements)
        return sorted(counts, key=lambda e: (-counts[e], order.index(e)))
    short = probe_name.split("/", 1)[-1]
    named = [e for e in topo.elements if short == e or short.startswith(e + "-")]
    return sorted(named, key=len, reverse=True)[:1]
