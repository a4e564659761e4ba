#!/usr/bin/env python3
"""The host's folders stay layered (issue 52, item 7; docs/host.md, "Layers").

Computes the include graph of host/ from the sources: each quoted include that names a file of
host/ joins the including file's folder to the included file's folder. A header of
host/include/memtopo_host belongs to the folder of the source with its stem (runner.hpp to
running/, as runner.cpp), or to the folder HOMES names for a header without one. The layer order
is read from docs/host.md (the line after `<!-- host-layers -->`, lowest first, folders of one
layer joined by `=`). Fails (exit 1, each finding on a line) when
  - more than MAX_UPWARD includes run from a lower layer to a higher one,
  - a file outside commands/ includes the command line's internals (commands/cli_internal.hpp),
  - a folder of host/src is in no layer, or a public header has no home.
`--list` prints every include between folders with its direction; `--self-test` checks that a
small tree breaking each rule fails."""
import argparse
import contextlib
import io
import re
import sys
import tempfile
from pathlib import Path

MAX_UPWARD = 3
# Public headers whose definitions live in a source of another stem (or inline).
HOMES = {
    "csv": "formats", "topology_export": "formats", "version": "formats",
    "probe_executor": "running", "worker": "running", "fleet": "fleet", "draw": "output",
}
CLI_INTERNALS = "host/src/commands/cli_internal.hpp"
SUFFIXES = (".cpp", ".hpp", ".h", ".cpp.in")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_layers(doc):
    lines = doc.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "<!-- host-layers -->":
            order = lines[i + 1].strip().strip("`")
            return [[f.strip().strip("`") for f in layer.split("=")] for layer in order.split("<")]
    raise SystemExit(f"{doc}: no line after <!-- host-layers --> declares the layers")


def self_test():
    """A tree with an include of cli_internal.hpp from output/ and four upward includes fails
    naming both; the same tree without them passes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs/host.md").write_text("<!-- host-layers -->\n`base < output < commands`\n")
        for name in ["base/a.hpp", "output/b.cpp", "commands/cli_internal.hpp", "commands/c.cpp"]:
            (root / "host/src" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "host/src" / name).write_text("")
        (root / "host/src/base/a.hpp").write_text('#include "output/b.cpp"\n' * 4)
        (root / "host/src/output/b.cpp").write_text('#include "commands/cli_internal.hpp"\n')
        with contextlib.redirect_stdout(io.StringIO()) as out:
            failed = check(root, False)
        text = out.getvalue()
        ok = failed == 1 and "outside commands/" in text and "5 includes run from a lower layer" in text
        (root / "host/src/base/a.hpp").write_text("")
        (root / "host/src/output/b.cpp").write_text('#include "base/a.hpp"\n')
        with contextlib.redirect_stdout(io.StringIO()):
            ok = ok and check(root, False) == 0
    print("self-test " + ("passed" if ok else "FAILED:\n" + text))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", default=Path(__file__).resolve().parents[2], type=Path)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    return check(args.source_dir, args.list)


def check(root, list_includes):
    layers = read_layers(root / "docs/host.md")
    layer_of = {folder: n for n, layer in enumerate(layers) for folder in layer}
    files = sorted(p for p in (root / "host").rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
    rel = {p: p.relative_to(root).as_posix() for p in files}
    sources = {}  # stem -> folder of host/src
    for p in files:
        parts = rel[p].split("/")
        if parts[1] == "src" and len(parts) == 4:
            sources.setdefault(p.name.split(".")[0], parts[2])
    findings = []

    def folder(path):
        parts = path.split("/")
        if parts[1] == "src":
            return parts[2] if len(parts) == 4 else "main"
        if parts[1] == "include":
            stem = parts[-1].split(".")[0]
            home = HOMES.get(stem) or sources.get(stem)
            if home is None:
                findings.append(f"{path}: a public header with no home folder (no source of its stem; add it to HOMES)")
            return home
        return "main"  # host/main.cpp

    def resolve(name):
        for cand in (f"host/include/{name}", f"host/src/{name}"):
            if (root / cand).is_file():
                return cand
        return None

    for f in sorted({rel[p].split("/")[2] for p in files if rel[p].startswith("host/src/") and rel[p].count("/") == 3}):
        if f not in layer_of:
            findings.append(f"host/src/{f}: a folder in no layer of docs/host.md")
    layer_of.setdefault("main", len(layers))
    upward, crossing = [], []
    for p in files:
        src = rel[p]
        for name in INCLUDE.findall(p.read_text(errors="replace")):
            dst = resolve(name)
            if dst is None:
                continue
            if dst == CLI_INTERNALS and not src.startswith("host/src/commands/"):
                findings.append(f"{src}: includes the command line's internals ({name}) outside commands/")
            a, b = folder(src), folder(dst)
            if a is None or b is None or a == b or a not in layer_of or b not in layer_of:
                continue
            up = layer_of[b] > layer_of[a]
            crossing.append((src, a, dst, b, up))
            if up:
                upward.append(f"{src} ({a}) -> {dst} ({b})")
    if list_includes:
        for src, a, dst, b, up in crossing:
            print(f"{'UP  ' if up else 'down'} {a:9} -> {b:9} {src} -> {dst}")
    order = " < ".join(" = ".join(l) for l in layers)
    print(f"layers (lowest first): {order}; {len(crossing)} includes between folders, {len(upward)} upward")
    if len(upward) > MAX_UPWARD:
        findings.append(f"{len(upward)} includes run from a lower layer up to a higher one (at most {MAX_UPWARD}):")
        findings += ["  " + u for u in upward]
    elif upward:
        print("upward (allowed, at most %d):\n  " % MAX_UPWARD + "\n  ".join(upward))
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
