#!/usr/bin/env python3
"""Which values depend on the probes that ran beside them?

Reads the output folder of scripts/device/isolation-check.sh: default runs t*.toml and
only-PLUGIN.toml, each plugin alone. For each key of a plugin's probes it prints where the
plugin's own run differs from every default run as `memtopo diff` judges a difference (the
GPU model's tolerances; settings and keys declared to vary are not counted), and where a key
is present in one and absent in the other. Exit status 1 where it prints a finding.

Usage: MEMTOPO=build/bin/memtopo scripts/isolation-diff.py DIR
"""
import json
import os
import pathlib
import subprocess
import sys
import tomllib


def probe_of_keys(doc):
    """{table.key: probe} of the values the file holds."""
    return {f"{table}.{key}": prov.get("probe", "")
            for table, entries in doc.get("provenance", {}).items() for key, prov in entries.items()}


def absent_keys(doc):
    """{table.key: (probe, reason)} of the keys a probe ran and left out."""
    return {key: (probe, why) for probe, entry in doc.get("probes", {}).items()
            for key, why in (entry.get("absent") or {}).items()}


def diff(memtopo, a, b):
    out = subprocess.run([memtopo, "diff", "--format", "json", str(a), str(b)], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"memtopo diff {a} {b} failed ({out.returncode}): {out.stderr.strip()}")
    return {d["key"]: d for d in json.loads(out.stdout)["differences"]}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    folder = pathlib.Path(sys.argv[1])
    memtopo = os.environ.get("MEMTOPO", "memtopo")
    defaults = sorted(folder.glob("t*.toml"))
    if not defaults:
        sys.exit(f"{folder}: no default run t*.toml; run scripts/device/isolation-check.sh to make them")
    # Each default run's keys, read once: {table.key: probe}.
    default_keys = [probe_of_keys(tomllib.loads(p.read_text())) for p in defaults]
    found = compared = 0
    for path in sorted(folder.glob("only-*.toml")):
        plugin = path.stem[len("only-"):]
        alone = tomllib.loads(path.read_text())
        held, why_absent = probe_of_keys(alone), absent_keys(alone)
        mine = {k for keys in [held, *default_keys] for k, probe in keys.items() if probe.startswith(plugin + "/")}
        differs = [diff(memtopo, d, path) for d in defaults]
        compared += len(mine)
        for key in sorted(mine):
            in_default = [key in keys for keys in default_keys]
            if (key in held) != any(in_default) or not all(x == in_default[0] for x in in_default):
                why = why_absent.get(key, ("", "held"))[1] if key not in held else "held"
                print(f"{plugin}: {key} alone: {why}; in the default runs: {in_default}")
                found += 1
            elif all(key in d for d in differs):
                d = differs[0][key]
                print(f"{plugin}: {key} alone {d['b']} ({d['b_bound']}), default {d['a']} ({d['a_bound']}),"
                      f" {d['relative_change_percent']:.1f} % apart")
                found += 1
    print(f"{found} finding(s) in {compared} keys of {len(list(folder.glob('only-*.toml')))} plugins run alone")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
