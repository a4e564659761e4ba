#!/usr/bin/env python3
"""A raw folder names the run that wrote it (run.toml) and `memtopo report` refuses the series of
another run beside a topology. Two simulated runs of different devices; the report of the first
topology with the second run's folder exits 2 naming both. Usage: check_raw_identity.py MEMTOPO
SOURCE_DIR WORK_DIR. Exit 77 (skipped) without matplotlib."""

import os
import shutil
import subprocess
import sys

from need_module import need  # noqa: E402

need("matplotlib")

memtopo, source, work = sys.argv[1:4]
sys.path.insert(0, os.path.join(source, "host", "report"))
import raw_identity  # noqa: E402
import topology  # noqa: E402

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


def run(device, name):
    raw, topo = os.path.join(work, name + "-raw"), os.path.join(work, name + ".toml")
    subprocess.run([memtopo, "run", "-q", "--device", device, "--only", "device-info", "--raw-dir", raw, "-o", topo],
                   check=True)
    return raw, topo


raw_a, topo_a = run("sim:hopper-like", "a")
raw_b, _ = run("sim:kepler-like", "b")
check(os.path.isfile(os.path.join(raw_a, "run.toml")), "run --raw-dir wrote no run.toml")
a = topology.load(topo_a)
check(raw_identity.mismatch(raw_a, a) == "", f"the run's own folder: {raw_identity.mismatch(raw_a, a)}")
why = raw_identity.mismatch(raw_b, a)
check("device_spec" in why and "another run" in why, f"another run's folder: {why!r}")

page = os.path.join(work, "page.html")
r = subprocess.run([memtopo, "report", topo_a, "--raw-dir", raw_b, "-o", page], capture_output=True, text=True)
check(r.returncode == 2 and "its series are of another run than" in r.stderr + r.stdout,
      f"report with another run's folder: exit {r.returncode}: {r.stderr + r.stdout}")
check(not os.path.exists(page), "a page was written from another run's series")
r = subprocess.run([memtopo, "report", topo_a, "--raw-dir", raw_a, "-o", page], capture_output=True, text=True)
check(r.returncode == 0, f"report with the run's own folder: exit {r.returncode}: {r.stderr + r.stdout}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
shutil.rmtree(work, ignore_errors=True)
print("raw folders: run.toml names the run; the report refuses another run's series")
