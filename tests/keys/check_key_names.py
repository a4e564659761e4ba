#!/usr/bin/env python3
"""No file of the host or the SDK's library names a plugin or a plugin key: shared code finds a
plugin's key by its role (docs/roles.md), which the plugin declares (issue 68, item 3).

The names come from the plugins themselves: `memtopo list --format json` (plugin names, the keys
each probe provides, their roles), the plugin folders' sources (folder names; keys in `.key(`,
`.provides({`, `ctx.result(`) and the shipped roles (plugins/key_roles.toml), so that a plugin
this build leaves out (the Hopper ones without CUDA) counts too. Comments are skipped: a key as an example in a comment names nothing
the code depends on. What counts as naming one, in code and string literals:
  - a plugin name in quotes, or at the start of a quoted probe name ("data-cache",
    "mlp/loads-in-flight"; MT4G's "/memory/constant" is not ours);
  - a provided key whole inside a string literal ("l2.partitions", "needs device.sm_count");
  - an element in quotes, or before a '.' in quotes ("l1d", "l2.x");
  - a key's part with an underscore after a dot in quotes (".far_copy_bytes": joined to an
    element), or alone in quotes ("far_copy_bytes") unless it is the quantity of a declared role
    ("size_bytes" of cache.size_bytes@l1_cache: the roles' vocabulary, docs/roles.md).
The SDK's cache procedure (sdk/src/procedures/element_probes.cpp) writes its keys under the
element a plugin gives it: it may join its parts to that element (".size_bytes"), as a plugin
names its own keys; every other rule holds for it.
A role in quotes ("bus.host_to_device_bytes_per_second") names no key: its class is one the
shipped plugins' roles use, and the check fails where a class is also an element.
The element `device` and its parts alone are the fields of the ABI's mt_device_info, which the
host itself carries for a run's identity (the journal, the worker's messages, resume): they are
not checked; a whole `device.` key is. Exit 0 when none is found, 1 (with each finding) otherwise."""
import argparse
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

# Folders checked, relative to the source tree. engine/ (the simulator, the CUDA backend) is
# left out: its simulated-device description has its own key vocabulary (docs/simulator.md);
# data files other than the mapping are measurements (fleet_spreads.toml).
CHECKED = ["host/topology", "host/run", "host/tools", "host/cli", "host/report", "host/python/memtopo", "host/main.cpp",
           "sdk/src/procedures", "sdk/src/analysis"]
# Writes keys of the elements plugins give it: a dotted part is its own (see above).
PROCEDURE = "sdk/src/procedures/element_probes.cpp"
SUFFIXES = {".cpp", ".hpp", ".h", ".cuh", ".cu", ".in", ".py"}


def strip_cpp_comments(text):
    """The text with // and /* */ comments blanked (strings and characters kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):  # a raw string: up to its own delimiter
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(text[i:j])
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def strip_python_comments(text):
    """The text less comments and docstrings (a string that is a statement of its own)."""
    lines = text.splitlines(keepends=True)
    drop = []  # (start, end) positions
    prev = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            drop.append((tok.start, tok.end))
        elif tok.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
            drop.append((tok.start, tok.end))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    for (r0, c0), (r1, c1) in reversed(drop):
        if r0 == r1:
            lines[r0 - 1] = lines[r0 - 1][:c0] + lines[r0 - 1][c1:]
        else:
            lines[r0 - 1] = lines[r0 - 1][:c0] + "\n"
            for r in range(r0, r1 - 1):
                lines[r] = "\n"
            lines[r1 - 1] = lines[r1 - 1][c1:]
    return "".join(lines)


KEY = r'"([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)"'


def from_sources(root):
    """Plugin names (folders with a CMakeLists.txt) and the keys their sources declare."""
    plugins, keys = set(), set()
    for d in sorted((root / "plugins").iterdir()):
        if not (d / "CMakeLists.txt").is_file():
            continue
        plugins.add(d.name)
        for f in d.glob("*"):
            if f.suffix not in SUFFIXES:
                continue
            text = strip_cpp_comments(f.read_text())
            keys.update(re.findall(r"(?:\.key\(|ctx\.result\()\s*" + KEY, text))
            for block in re.findall(r"\.provides\(\{([^}]*)\}", text):
                keys.update(re.findall(KEY, block))
    return plugins, keys


def shipped_roles(root):
    """The roles of plugins/key_roles.toml: every shipped plugin's, built or not."""
    text = (root / "plugins/key_roles.toml").read_text()
    return set(re.findall(r'^"[^"]+" = "([^"]+)"$', text, re.M))


def patterns(listing, quantities, sources):
    plugins = sorted({p["plugin"] for p in listing["probes"]} | sources[0])
    keys = sorted({k for p in listing["probes"] for k in p["provides"]} | sources[1])
    own = [k for k in keys if not k.startswith("device.")]  # mt_device_info's fields: see above
    elements = sorted({k.split(".")[0] for k in own})
    parts = sorted({k.split(".", 1)[1] for k in own if "_" in k.split(".", 1)[1]})
    out = []
    for p in plugins:
        out.append(("plugin " + p, re.compile(r"[\"']" + re.escape(p) + r"(?=[\"'/])"), False))
    for k in keys:
        out.append(("key " + k, re.compile(r"(?<![\w.])" + re.escape(k) + r"(?![\w])"), True))
    for e in elements:
        out.append(("element " + e, re.compile(r"[\"']" + re.escape(e) + r"(?=[\"'.])"), False))
    for k in parts:
        lead = r"\." if k in quantities else r"[\"'.]"
        out.append(("key part " + k, re.compile(lead + re.escape(k) + r"(?=[\"'])"), False))
    return out


LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def literals(line):
    """The string literals of a line, joined: where a whole key is looked for."""
    return " ".join(m.group(0) for m in LITERAL.finditer(line))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--memtopo", required=True)
    ap.add_argument("--source-dir", required=True)
    args = ap.parse_args()
    root = Path(args.source_dir)
    listing = json.loads(subprocess.run([args.memtopo, "list", "--format", "json"], check=True,
                                        capture_output=True, text=True).stdout)
    roles = {r for p in listing["probes"] for r in p.get("roles", {}).values()} | shipped_roles(root)
    quantities = {r.split(".", 1)[1].split("@")[0] for r in roles}
    pats = patterns(listing, quantities, from_sources(root))
    # A role literal ("bus.host_to_device_bytes_per_second", docs/roles.md) names what a key is,
    # not a key: its class is never an element, so it cannot be read as one.
    classes = sorted({r.split(".")[0] for r in roles})
    elements = {k.split(".")[0] for p in listing["probes"] for k in p["provides"]}
    if set(classes) & elements:
        print(f"role classes that are also elements: {sorted(set(classes) & elements)} (docs/roles.md, \"Form\")")
        return 1
    role_literal = re.compile(r'"(?:' + "|".join(map(re.escape, classes)) + r')\.[a-z0-9_]+(?:@[a-z0-9_]+)?"') \
        if classes else None
    hits = 0
    files = []
    for c in CHECKED:
        p = root / c
        if not p.exists():  # a folder moved: say so rather than check nothing
            print(f"{c}: not found; update CHECKED in tests/keys/check_key_names.py")
            return 1
        files += [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES)
    for f in files:
        text = f.read_text()
        code = strip_python_comments(text) if f.suffix == ".py" else strip_cpp_comments(text)
        for lineno, line in enumerate(code.splitlines(), 1):
            if '"' not in line and "'" not in line:  # every name is looked for next to a quote
                continue
            if role_literal:
                line = role_literal.sub('""', line)
            strings = literals(line)
            for what, rx, in_literals in pats:
                if what.startswith("key part") and str(f.relative_to(root)) == PROCEDURE:
                    continue
                if rx.search(strings if in_literals else line):
                    print(f"{f.relative_to(root)}:{lineno}: names {what}: {line.strip()[:100]}")
                    hits += 1
    print(f"{len(files)} files checked against {len(pats)} names; {hits} found")
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())
