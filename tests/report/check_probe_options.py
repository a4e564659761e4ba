#!/usr/bin/env python3
"""The report's probe table names the options a run gave a probe other than its defaults
([probes."..".options], docs/format.md), escaped; a probe without any shows none. Usage:
check_probe_options.py SOURCE_DIR. Exit 77 (skipped) without matplotlib, which the report's
modules import."""

import os
import sys
import tomllib

from need_module import need  # noqa: E402

need("matplotlib")

sys.path.insert(0, os.path.join(sys.argv[1], "host", "report"))
import html_page  # noqa: E402
import topology  # noqa: E402

TEXT = """
[meta]
schema_version = 1
[l2]
size_bytes = 1048576
[provenance.l2]
size_bytes = { probe = "data-cache/l2-size", confidence = 0.9, bound = "exact" }
[probes."data-cache/l2-size"]
version = "1.0.0"
status = "ok"
reason = ""
duration_s = 1.5
[probes."global-throughput/streams"]
version = "2.1.0"
status = "ok"
reason = ""
duration_s = 2.5
[probes."global-throughput/streams".options]
"series" = ["dram_read", "l2_<read>"]
"""

topo = topology._organise("t.toml", tomllib.loads(TEXT))
problems = []
streams = topo.probes["global-throughput/streams"]
if streams.options != {"series": ["dram_read", "l2_<read>"]}:
    problems.append(f"the streams probe's options read as {streams.options}")
if topo.probes["data-cache/l2-size"].options:
    problems.append("a probe without options shows some")
html = html_page.probes_section(topo, [])
if '<code>series = [&quot;dram_read&quot;, &quot;l2_&lt;read&gt;&quot;]</code>' not in html:
    problems.append("the probe table does not show the series option, escaped:\n" + html)
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
