#!/usr/bin/env python3
"""The host's parts and folders stay layered (docs/host.md, "Layers").

host/ holds parts (topology, run, tools, cli), each a library; a part's folders are its layers.
docs/host.md declares them after `<!-- host-layers -->`, one line a part:
    - `run` over `topology`: `planning < running < output < launch`
(`cli` has no folders: `- `cli` over `run`, `tools`, `topology``). Computes the include graph
from the sources (each quoted include that names a file of host/, resolved beside the
including file, then from host/) and fails (exit 1, a finding a line) when
  - a file includes one of a part its own part is not over (the run a tool, a tool the run),
  - a file includes one of a higher folder of its own part,
  - a file outside cli/ includes the command line's internals (cli/cli_internal.hpp),
  - a file of host/ lies in no declared part or folder.
No exceptions: a header lives beside its source, in the folder the graph reads it in.
`--list` prints every include between folders; `--self-test` checks that a small tree
breaking each rule fails."""
import argparse
import contextlib
import io
import re
import sys
import tempfile
from pathlib import Path

CLI_INTERNALS = "host/cli/cli_internal.hpp"
SUFFIXES = (".cpp", ".hpp", ".h", ".cpp.in")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PART_LINE = re.compile(r"^- `([a-z]+)`(?: over ((?:`[a-z]+`(?:, )?)+))?(?:: (.*))?$")


def read_parts(doc):
    """{part: (set of parts it is over, [folders lowest first])} from docs/host.md."""
    lines = doc.read_text().splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip() == "<!-- host-layers -->"), None)
    if start is None:
        raise SystemExit(f"{doc}: no <!-- host-layers --> line declares the host's parts")
    parts = {}
    for line in lines[start + 1:]:
        m = PART_LINE.match(line.strip())
        if not m:
            break
        over = set(re.findall(r"`([a-z]+)`", m.group(2) or ""))
        folders = [f.strip().strip("`") for f in (m.group(3) or "").split("<") if f.strip()]
        parts[m.group(1)] = (over, folders)
    if not parts:
        raise SystemExit(f"{doc}: the lines after <!-- host-layers --> declare no part")
    return parts


def place(path, parts):
    """(part, folder index) of a host/ file; folder -1 for a part without folders; None outside."""
    bits = path.split("/")
    if len(bits) == 2:
        return ("main", -1)  # host/main.cpp
    part = bits[1]
    if part not in parts:
        return None
    folders = parts[part][1]
    if not folders:
        return (part, -1) if len(bits) == 3 else None
    return (part, folders.index(bits[2])) if len(bits) == 4 and bits[2] in folders else None


def check(root, list_includes):
    parts = read_parts(root / "docs/host.md")
    code = [p for p in (root / "host").rglob("*") if p.is_file() and p.name.endswith(SUFFIXES)]
    code = sorted(p for p in code if p.relative_to(root).parts[1] not in ("python", "report", "data"))
    rel = {p: p.relative_to(root).as_posix() for p in code}
    findings, crossing = [], 0
    for p in code:
        if place(rel[p], parts) is None:
            findings.append(f"{rel[p]}: in no part or folder that docs/host.md declares")
    for p in code:
        src = rel[p]
        here = place(src, parts)
        for name in INCLUDE.findall(p.read_text(errors="replace")):
            dst = next((c for c in (Path(src).parent.joinpath(name).as_posix(), "host/" + name)
                        if (root / c).is_file()), None)
            if dst is None:
                continue
            dst = Path(dst).as_posix()
            if dst == CLI_INTERNALS and not src.startswith("host/cli/"):
                findings.append(f"{src}: includes the command line's internals ({name}) outside cli/")
            there = place(dst, parts)
            if here is None or there is None or here == there:
                continue
            crossing += 1
            (a, fa), (b, fb) = here, there
            if list_includes:
                print(f"{a}/{fa} -> {b}/{fb}  {src} -> {dst}")
            if a == "main":
                continue
            if a != b and b not in parts[a][0]:
                findings.append(f"{src} ({a}) includes {dst} ({b}): {a} is not over {b}")
            elif a == b and fb > fa:
                folders = parts[a][1]
                findings.append(f"{src} ({a}/{folders[fa]}) includes {dst} ({a}/{folders[fb]}), a higher folder")
    summary = "; ".join(f"{n}" + (f" over {', '.join(sorted(o))}" if o else "") + (f": {' < '.join(f)}" if f else "")
                        for n, (o, f) in parts.items())
    print(f"parts: {summary}; {crossing} includes between folders")
    for f in findings:
        print(f)
    return 1 if findings else 0


def self_test():
    """A tree where the run includes a tool, a folder includes a higher one and a tool includes
    the command line's internals fails naming each; the same tree without them passes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "docs").mkdir()
        (root / "docs/host.md").write_text("<!-- host-layers -->\n- `topology`: `base < values`\n"
                                           "- `run` over `topology`: `planning`\n- `tools` over `topology`: `fleet`\n"
                                           "- `cli` over `run`, `tools`, `topology`\n")
        files = ["topology/base/a.hpp", "topology/values/v.hpp", "run/planning/p.cpp", "tools/fleet/f.cpp",
                 "cli/cli_internal.hpp", "cli/c.cpp"]
        for name in files:
            (root / "host" / name).parent.mkdir(parents=True, exist_ok=True)
            (root / "host" / name).write_text("")
        (root / "host/run/planning/p.cpp").write_text('#include "tools/fleet/f.cpp"\n')
        (root / "host/topology/base/a.hpp").write_text('#include "topology/values/v.hpp"\n')
        (root / "host/tools/fleet/f.cpp").write_text('#include "cli/cli_internal.hpp"\n')
        with contextlib.redirect_stdout(io.StringIO()) as out:
            failed = check(root, False)
        text = out.getvalue()
        ok = (failed == 1 and "run is not over tools" in text and "a higher folder" in text
              and "outside cli/" in text)
        (root / "host/run/planning/p.cpp").write_text('#include "topology/values/v.hpp"\n')
        (root / "host/topology/base/a.hpp").write_text("")
        (root / "host/tools/fleet/f.cpp").write_text('#include "topology/base/a.hpp"\n')
        (root / "host/cli/c.cpp").write_text('#include "cli_internal.hpp"\n#include "run/planning/p.cpp"\n')
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


if __name__ == "__main__":
    sys.exit(main())
