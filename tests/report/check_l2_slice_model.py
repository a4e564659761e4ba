#!/usr/bin/env python3
"""scripts/l2-slice-model on a made-up matrix of known structure: 8 SMs on two sides, 16 lines
whose side flips every two lines, latency = 250 + SM term + line term + 20 where SM side and
line side differ. The script must find the two sides of 4 SMs, the 2-line granule, and a residual
of nothing past that factor. Exit 77 (skipped) without numpy."""

import os
import subprocess
import sys
import tempfile

from need_module import need  # noqa: E402

need("numpy")

script = os.path.join(sys.argv[1], "scripts", "l2-slice-model")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "m.csv")
    with open(path, "w") as f:
        f.write("ticket,sm,line,first,repeat_min\n")
        for s in range(8):
            for i in range(16):
                far = (s % 2) != ((i // 2) % 2)
                f.write(f"{s},{s},{i},0,{250 + s + (i % 3) + (20 if far else 0)}\n")
    out = subprocess.run([sys.executable, script, path], capture_output=True, text=True).stdout
print(out)
wanted = ["SMs on its two sides: 4 and 4", "line groups of 2 kept one sign: 100 %",
          "line groups of 4 kept one sign: 0 %", "additive + first factor: residual sd 0.0"]
missing = [w for w in wanted if w not in out]
print("FAILED: missing " + repr(missing) if missing else "all checks passed")
sys.exit(1 if missing else 0)
