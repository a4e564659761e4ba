#!/usr/bin/env python3
"""`memtopo draw -o F.svg` nests as lstopo does: read back from the SVG, every SM's box lies in
its GPC's, each GPC's in the L2 partition it is near, the partitions in the L2 and the L2 in
DRAM, as the topology's maps say; each SM carries a tooltip naming its GPC; the bandwidth
ladder and the legend are there. On the committed H100 and simulated Hopper-like topologies,
and on the H100's with one GPC split across partitions (GPCs then sit in the L2 itself).
Usage: check_picture_nesting.py MEMTOPO SOURCE_DIR WORK_DIR. Exit 77 (skipped) without
matplotlib."""

import os
import re
import shutil
import subprocess
import sys
import tomllib

from need_module import need  # noqa: E402

need("matplotlib")

memtopo, source, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
problems = []
GROUP = re.compile(r'<g id="([a-z0-9-]+)">\s*(?:<title>([^<]*)</title>)?\s*<path d="([^"]*)"')


def check(ok, what):
    if not ok:
        problems.append(what)


def boxes(svg):
    """Each element's id -> (bounding box of its outline, tooltip)."""
    found = {}
    for gid, title, d in GROUP.findall(svg):
        xy = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", d)]
        xs, ys = xy[0::2], xy[1::2]
        found[gid] = ((min(xs), min(ys), max(xs), max(ys)), title or "")
    return found


def inside(a, b):
    return a[0] >= b[0] - 0.01 and a[1] >= b[1] - 0.01 and a[2] <= b[2] + 0.01 and a[3] <= b[3] + 0.01


def draw(topology_text, name):
    path = os.path.join(work, name + ".toml")
    with open(path, "w") as f:
        f.write(topology_text)
    svg = os.path.join(work, name + ".svg")
    subprocess.run([memtopo, "draw", path, "-o", svg], check=True)
    with open(svg, encoding="utf-8") as f:
        return f.read()


def check_nesting(topology_text, name, partitions_nest=True):
    topo = tomllib.loads(topology_text)
    gpc = topo["gpc"]["index_of_sm"]
    part = topo["l2"].get("near_partition_of_sm", [])
    svg = draw(topology_text, name)
    found = boxes(svg)
    for outer, inner in (("device-memory", "l2-cache"),):
        check(outer in found and inner in found and inside(found[inner][0], found[outer][0]),
              f"{name}: {inner} is not drawn inside {outer}")
    for k, g in enumerate(gpc):
        sm, box = f"sm-{k}", f"gpc-{g}"
        if sm not in found or box not in found:
            check(False, f"{name}: no element {sm} or {box}")
            continue
        check(inside(found[sm][0], found[box][0]), f"{name}: SM {k} is not inside GPC {g}")
        check(f"GPC {g}" in found[sm][1], f"{name}: SM {k}'s tooltip does not name GPC {g}: {found[sm][1]!r}")
        if partitions_nest and part:
            holder = f"l2-partition-{part[k]}"
            check(holder in found and inside(found[box][0], found[holder][0]),
                  f"{name}: GPC {g} is not inside L2 partition {part[k]}")
            check(holder in found and inside(found[holder][0], found["l2-cache"][0]), f"{name}: {holder} not in the L2")
        else:
            check(inside(found[box][0], found["l2-cache"][0]), f"{name}: GPC {g} is not inside the L2")
    if not partitions_nest:
        check(not any(k.startswith("l2-partition-") for k in found), f"{name}: partitions drawn though GPCs span them")
    for word in ("bandwidths", "legend", "latencies"):
        check(f">{word}<" in svg or f"{word}</text>" in svg or word in svg, f"{name}: no {word} in the picture")


measured = os.path.join(source, "tests", "sim", "measured")
with open(os.path.join(measured, "h100-sxm.toml"), encoding="utf-8") as f:
    h100 = f.read()
check_nesting(h100, "h100")
with open(os.path.join(measured, "hopper-like-sim.toml"), encoding="utf-8") as f:
    check_nesting(f.read(), "hopper-like-sim")
# SM 0 moved to the other partition: GPC 0 spans both, so GPCs sit in the L2.
part = tomllib.loads(h100)["l2"]["near_partition_of_sm"]
moved = [1 - part[0]] + part[1:]
split = re.sub(r"\nnear_partition_of_sm = \[[^\]]*\]", "\nnear_partition_of_sm = " + str(moved), h100, count=1)
check(split != h100, "the partition map was not replaced")
check_nesting(split, "h100-split", partitions_nest=False)

if problems:
    print("\n".join(problems[:40]))
    sys.exit(1)
shutil.rmtree(work, ignore_errors=True)
print("picture: SMs in their GPCs, GPCs in their partitions, the L2 in DRAM")
