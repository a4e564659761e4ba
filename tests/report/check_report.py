#!/usr/bin/env python3
"""The report in a real browser (docs/report.md, "The browser test").

For each case (a simulated run made here, or a committed input folder with topology.toml and
raw/): `memtopo report`, then headless Chromium loads the page and prints its DOM. Checked:
every image plot rendered (the page's own count, data-plots-rendered == data-plots-expected > 0),
no console message, one plot per plottable CSV and one table per other CSV (no series left
out), a section per element table of the topology, the GPU's picture before the first table,
the roofline as an operation x metric table; `memtopo draw -o F.svg` and `-o F.png` of the same
topology: a well-formed SVG naming every level the text drawing names, and a PNG.

Exit status: 0 all passed, 1 a check failed, 77 skipped (no Chromium, or no Python with
matplotlib for memtopo report): ctest shows SKIPPED, never passed.

    check_report.py --memtopo BIN --source-dir SRC --work-dir DIR (--sim NAME | --inputs)
"""

import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77
NEEDS_MATPLOTLIB = "needs Python 3 with matplotlib"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NON_ELEMENT_TABLES = ("meta", "sim")


class CheckFailed(Exception):
    pass


class Skipped(Exception):
    pass


def run(cmd, timeout, env=None):
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return proc, time.monotonic() - started


def memtopo_env():
    env = dict(os.environ)
    env.pop("MEMTOPO_PLUGIN_PATH", None)  # the build's plugins only
    return env


def simulated_case(args, name):
    """The default run of examples/devices/NAME.toml with --raw-dir: (topology, raw dir). The run
    is measured once per build and shared with the other tests that read it
    (tests/shipped/measured-run)."""
    folder = os.path.join(os.path.dirname(os.path.dirname(args.memtopo)), "tests", "shipped", name)
    device = os.path.join(args.source_dir, "examples", "devices", name + ".toml")
    script = os.path.join(args.source_dir, "tests", "shipped", "measured-run")
    proc, took = run([script, args.memtopo, device, folder], 900, memtopo_env())
    print(f"{name}: the measured run ended with status {proc.returncode} ({took:.1f} s here, "
          f"messages in {folder}/log)")
    topology, raw = os.path.join(folder, "topology.toml"), os.path.join(folder, "raw")
    if proc.returncode not in (0, 1) or not os.path.isfile(topology):
        raise CheckFailed(f"{name}: memtopo run exited {proc.returncode}:\n{proc.stderr}")
    return topology, raw


def input_cases(args):
    """tests/report/inputs/*/ holding topology.toml and raw/ (an H100 run, a simulated one, ...)."""
    root = os.path.join(args.source_dir, "tests", "report", "inputs")
    found = []
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        topology, raw = os.path.join(root, name, "topology.toml"), os.path.join(root, name, "raw")
        if os.path.isfile(topology) and os.path.isdir(raw):
            found.append((name, topology, raw))
    return found


def make_report(args, name, topology, raw):
    html = os.path.join(args.work_dir, name + ".html")
    proc, took = run([args.memtopo, "report", topology, "--raw-dir", raw, "-o", html], 600, memtopo_env())
    sys.stdout.write(proc.stdout)
    if proc.returncode == 2 and NEEDS_MATPLOTLIB in proc.stderr:
        raise Skipped(proc.stderr.strip())
    if proc.returncode != 0:
        raise CheckFailed(f"{name}: memtopo report exited {proc.returncode}:\n{proc.stderr}")
    print(f"{name}: report written in {took:.1f} s ({os.path.getsize(html) // 1024} KiB)")
    return html


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise Skipped("no Chromium (" + ", ".join(BROWSERS) + ") on PATH: install the Debian package chromium")


def load_in_browser(chromium, html, work_dir):
    """The DOM after the page loaded, and the browser's console messages."""
    profile = os.path.join(work_dir, "chromium-profile")
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
           f"--user-data-dir={profile}", "--no-first-run", "--virtual-time-budget=10000",
           "--dump-dom", "file://" + os.path.abspath(html)]
    proc, _ = run(cmd, 180)
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    if proc.returncode != 0 or "<body" not in proc.stdout:
        raise CheckFailed(f"{html}: chromium exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    if os.environ.get("MEMTOPO_REPORT_SCREENSHOTS"):
        run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={profile}", "--window-size=1400,3000", "--screenshot=" + html[:-5] + ".png",
             "file://" + os.path.abspath(html)], 180)
    return proc.stdout, console


def csv_kinds(raw):
    """Each CSV under `raw` (relative path) -> "plot" (two or more rows, every cell a number) or "table"."""
    kinds = {}
    for parent, _dirs, files in os.walk(raw):
        for f in files:
            if f.endswith(".csv"):
                path = os.path.join(parent, f)
                kinds[os.path.relpath(path, raw).replace(os.sep, "/")] = _csv_kind(path)
    return kinds


def _csv_kind(path):
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = [r for r in csv.reader(f) if r][1:]
    try:
        numeric = all(math.isfinite(float(c)) for r in rows for c in r)
    except ValueError:
        numeric = False
    return "plot" if len(rows) >= 2 and numeric else "table"


def element_tables(topology):
    """The [element] tables of a topology file (headers without a dot; not meta or sim)."""
    with open(topology, encoding="utf-8") as f:
        names = re.findall(r"^\[([a-z][a-z0-9_]*)\]\s*(?:#.*)?$", f.read(), re.M)
    return [n for n in names if n not in NON_ELEMENT_TABLES]


def check_dom(name, dom, console, topology, raw):
    problems = []
    body = re.search(r"<body([^>]*)>", dom)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1))) if body else {}
    expected, rendered = attrs.get("plots-expected"), attrs.get("plots-rendered")
    if expected is None or rendered is None:
        problems.append("the page's load script did not run (no data-plots-expected on <body>)")
    elif not (int(expected) > 0 and rendered == expected):
        problems.append(f"{rendered} of {expected} plots rendered")
    problems += [f"console: {line}" for line in console]
    plots = re.findall(r'<img class="plot" data-series="([^"]+)"', dom)
    tables = re.findall(r'data-table-series="([^"]+)"', dom)
    errors = re.findall(r'data-error-series="([^"]+)"', dom)
    kinds = csv_kinds(raw)
    want_plots = sorted(p for p, k in kinds.items() if k == "plot")
    want_tables = sorted(p for p, k in kinds.items() if k == "table")
    if sorted(plots) != want_plots:
        problems.append(f"plots {len(plots)} != plottable CSVs {len(want_plots)}: "
                        f"missing {sorted(set(want_plots) - set(plots))}, extra {sorted(set(plots) - set(want_plots))}")
    if sorted(tables) != want_tables:
        problems.append(f"tables {sorted(tables)} != other CSVs {want_tables}")
    problems += [f"series not shown: {e}" for e in errors]
    # The header: a simulated run says so before any value; every run shows its probe tally.
    with open(topology, encoding="utf-8") as f:
        simulated = re.search(r'^backend = "sim"', f.read(), re.M) is not None
    if simulated != ("Simulated GPU" in dom):
        problems.append(f"the simulated-GPU banner {'missing' if simulated else 'on a hardware run'}")
    if not re.search(r"<p class=\"tally\"><a href=\"#probes\">probes</a>: <span", dom):
        problems.append("no probe tally under the title")
    problems += picture_problems(attrs, dom, topology)
    roofline = re.search(r'<section id="el-roofline".*?</section>', dom, re.S)
    if roofline and "_peak_ops_per_cycle_per_sm" in roofline.group(0) and "data-matrix-cells" not in roofline.group(0):
        problems.append("[roofline] is not shown as an operation x metric table")
    sections = set(re.findall(r'<section id="el-[^"]*" data-element="([^"]+)"', dom))
    problems += [f"no section for [{e}]" for e in element_tables(topology) if e not in sections]
    print(f"{name}: {len(plots)} plots rendered ({rendered}/{expected}), {len(tables)} tables, "
          f"{len(sections)} element sections, {len(console)} console messages")
    if problems:
        raise CheckFailed(f"{name}:\n  " + "\n  ".join(problems))


def device_name(topology):
    with open(topology, encoding="utf-8") as f:
        found = re.search(r'^name = "([^"]*)"', f.read(), re.M)
    return found.group(1) if found else ""


def picture_problems(attrs, dom, topology):
    """The GPU at a glance heads the page: an <svg> the browser laid out, naming the device."""
    size = re.fullmatch(r"(\d+)x(\d+)", attrs.get("picture-size", ""))
    if not size or int(size.group(1)) < 600 or int(size.group(2)) < 200:
        return [f"the picture was not rendered (data-picture-size {attrs.get('picture-size')!r}, at least 600x200)"]
    picture = dom[dom.find('<div class="picture"'):]
    if dom.find('<div class="picture"') > dom.find('<table') or device_name(topology) not in picture[:200000]:
        return ["the picture is not before the first table, or does not name the device"]
    # Then the headline values, the first table: a row per element, the device's first.
    headline = re.search(r'<table class="headline" id="headline">.*?</table>', dom, re.S)
    if not headline or dom.find('<table') != headline.start():
        return ["the headline values are not the first table after the picture"]
    rows = re.findall(r"<th>([^<]*)</th>", headline.group(0))
    with open(topology, encoding="utf-8") as f:
        has_device = re.search(r"^\[device\]", f.read(), re.M) is not None
    if len(rows) < 3 or (has_device and rows[0] != "device"):
        return [f"the headline values name too few elements, or not the device first: {rows}"]
    # One formatter for the page: the device's memory as the headline shows it, in the table too.
    cell = re.search(r'<code>device\.global_memory_bytes</code></td><td class="[a-z]+" title="[^"]*">([^<]*)</td>', dom)
    if has_device and cell and cell.group(1) not in headline.group(0):
        return [f"the value table shows device.global_memory_bytes as {cell.group(1)!r}, the headline otherwise"]
    return []


def check_drawings(args, name, topology):
    """memtopo draw -o F.svg and -o F.png: a well-formed SVG whose text names the device and each
    level the text tree names, and a PNG."""
    import xml.etree.ElementTree as ET
    svg, png = (os.path.join(args.work_dir, name + ext) for ext in (".svg", ".png"))
    for out in (svg, png):
        proc, _ = run([args.memtopo, "draw", topology, "-o", out], 300, memtopo_env())
        if proc.returncode != 0:
            raise CheckFailed(f"{name}: memtopo draw -o {out} exited {proc.returncode}:\n{proc.stderr}")
    try:
        root = ET.parse(svg).getroot()
    except ET.ParseError as e:
        raise CheckFailed(f"{name}: {svg} is not well-formed XML: {e}")
    texts = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    tree, _ = run([args.memtopo, "draw", topology], 60, memtopo_env())
    labels = re.findall(r"── ([A-Za-z][A-Za-z0-9. -]*?)(?:  |$)", tree.stdout, re.M)
    missing = [l for l in [device_name(topology)] + labels if l not in texts and l not in ("each SM", "GPCs")]
    with open(png, "rb") as f:
        signature = f.read(8)
    if not root.tag.endswith("svg") or missing or signature != b"\x89PNG\r\n\x1a\n":
        raise CheckFailed(f"{name}: drawings: root <{root.tag}>, levels missing from the SVG {missing}, "
                          f"PNG signature {signature!r}")
    print(f"{name}: memtopo draw wrote an SVG with {len(labels)} levels and a PNG "
          f"({os.path.getsize(png) // 1024} KiB)")


def fleet_case(args, chromium):
    """memtopo fleet --report of three simulated devices, one of them with a slower DRAM: every plot
    rendered, a row per GPU, exactly one flagged."""
    folder = os.path.join(args.work_dir, "fleet")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(args.source_dir, "examples", "devices", "hopper-like.toml"), encoding="utf-8") as f:
        healthy = f.read()
    slow = re.sub(r"\ndram_read_bytes_per_second = [0-9.]+", "\ndram_read_bytes_per_second = 150000000000.0", healthy)
    devices = []
    for name, text in (("a", healthy), ("b", healthy), ("c", healthy), ("slow", slow)):
        path = os.path.join(folder, name + ".toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        devices.append("sim:" + path)
    out = os.path.join(folder, "out") + "/"
    proc, _ = run([args.memtopo, "run", "-q", "--only", "device-info,global-throughput/streams", "--device",
                   ",".join(devices), "-o", out], 600, memtopo_env())
    if proc.returncode != 0:
        raise CheckFailed(f"fleet: memtopo run exited {proc.returncode}:\n{proc.stderr}")
    html = os.path.join(args.work_dir, "fleet.html")
    proc, _ = run([args.memtopo, "fleet", "--report", "-o", html, out], 600, memtopo_env())
    if proc.returncode == 2 and NEEDS_MATPLOTLIB in proc.stderr:
        raise Skipped(proc.stderr.strip())
    if proc.returncode != 1 or not os.path.isfile(html):
        raise CheckFailed(f"fleet: memtopo fleet --report exited {proc.returncode} (1: a GPU flagged):\n{proc.stderr}")
    dom, console = load_in_browser(chromium, html, args.work_dir)
    body = re.search(r"<body([^>]*)>", dom)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1))) if body else {}
    problems = [f"console: {line}" for line in console]
    if not (int(attrs.get("plots-expected", "0")) > 0 and attrs.get("plots-rendered") == attrs.get("plots-expected")):
        problems.append(f"{attrs.get('plots-rendered')} of {attrs.get('plots-expected')} plots rendered")
    flagged_rows = dom.count('<tr class="flagged">')
    if flagged_rows != 1:
        problems.append(f"{flagged_rows} flagged rows, expected 1")
    print(f"fleet: {attrs.get('plots-rendered')} plots rendered, {len(console)} console messages")
    if problems:
        raise CheckFailed("fleet:\n  " + "\n  ".join(problems))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--memtopo", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--work-dir", required=True)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--sim", help="a simulated device of examples/devices (hopper-like, ...)")
    which.add_argument("--inputs", action="store_true", help="every folder of tests/report/inputs")
    which.add_argument("--fleet", action="store_true", help="memtopo fleet --report of simulated devices")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    os.makedirs(args.work_dir, exist_ok=True)
    try:
        chromium = browser()
        if args.fleet:
            fleet_case(args, chromium)
            print("all checks passed")
            return 0
        if args.sim:
            cases = [(args.sim + "-sim",) + simulated_case(args, args.sim)]
        else:
            cases = input_cases(args)
            if not cases:
                print("no folders with topology.toml and raw/ under tests/report/inputs: nothing to check")
                return 0
        for name, topology, raw in cases:
            html = make_report(args, name, topology, raw)
            dom, console = load_in_browser(chromium, html, args.work_dir)
            check_dom(name, dom, console, topology, raw)
            check_drawings(args, name, topology)
    except Skipped as e:
        print(f"SKIPPED: {e}")
        return SKIP
    except (CheckFailed, subprocess.TimeoutExpired) as e:
        print(f"FAILED: {e}")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
