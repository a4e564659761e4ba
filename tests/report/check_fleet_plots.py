#!/usr/bin/env python3
"""The fleet page's plots (host/report/fleet_page.py) have axes a person can read: a rate's y
axis in GB/s with its unit named, no scientific offset (1e11), the GPUs numbered on x. Usage:
check_fleet_plots.py SOURCE_DIR. Exit 77 (skipped) without matplotlib."""

import base64
import os
import re
import sys

from need_module import need  # noqa: E402

need("matplotlib")

sys.path.insert(0, os.path.join(sys.argv[1], "host", "report"))
import fleet_page  # noqa: E402


def svg_of(figure_html):
    uri = re.search(r"src='data:image/svg\+xml;base64,([^']+)'", figure_html).group(1)
    return base64.b64decode(uri).decode("utf-8")


def gpus(n):
    return [{"host": "node", "device": f"cuda:{i}", "uuid": f"GPU-{i}", "flagged": i == 2,
             "findings": [{"key": "throughput.dram_read_bytes_per_second", "flagged": True}] if i == 2 else []}
            for i in range(n)]


problems = []
for n in (4, 40):
    fleet = {"gpus": gpus(n)}
    group = {"members": list(range(n))}
    values = [3.19e12 + 1e9 * i for i in range(n)]
    values[2] = 2.1e12
    series = {"key": "throughput.dram_read_bytes_per_second", "values": values, "median": 3.2e12}
    svg = svg_of(fleet_page.series_plot(fleet, group, series))
    if "GB/s" not in svg:
        problems.append(f"{n} GPUs: no GB/s on the rate's axis")
    if "dram read (B/s)" not in svg:
        problems.append(f"{n} GPUs: the y axis does not name its quantity and unit")
    if re.search(r">\s*1e1[0-9]\s*<|×10", svg):
        problems.append(f"{n} GPUs: a scientific offset on the axis")
    series = {"key": "l2.size_bytes", "values": [26214400] * n, "median": 26214400}
    if "MiB" not in svg_of(fleet_page.series_plot(fleet, group, series)):
        problems.append(f"{n} GPUs: a size's axis not in MiB")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("fleet plots: units on every axis")
