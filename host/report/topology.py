"""The topology file as the report reads it: element tables, per-key provenance, probe
outcomes (docs/format.md)."""

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


def load(path):
    """Reads and organises `path`; InputError when it cannot."""
    try:
        with open(path, "rb") as f:
            root = tomllib.load(f)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; name a topology file written by `memtopo run`")
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; name a topology file")
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: TOML syntax error: {e}")
    return _organise(path, root)


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
    return ProbeInfo(name, str(table.get("status", "")), str(table.get("reason", "")),
                     str(table.get("version", "")), table.get("duration_s"))


def probe_elements(topo, probe_name):
    """The elements a probe relates to, most keys first: those it provided keys to, else the
    element its name starts with ("data-cache/l2-levels" -> l2), for probes that stored none."""
    counts = {}
    for info in topo.keys_by_probe.get(probe_name, []):
        counts[info.element] = counts.get(info.element, 0) + 1
    if counts:
        order = list(topo.elements)
        return sorted(counts, key=lambda e: (-counts[e], order.index(e)))
    short = probe_name.split("/", 1)[-1]
    named = [e for e in topo.elements if short == e or short.startswith(e + "-")]
    return sorted(named, key=len, reverse=True)[:1]
