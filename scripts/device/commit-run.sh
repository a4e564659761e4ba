#!/usr/bin/env bash
# The run to commit (memtopo run -v --raw-dir raw1 -o t1.toml, stamped), two default runs,
# diffs, and compare with the committed H100 run.
source "$(dirname "$0")/common.sh" c
verbose_run --raw-dir "$O/raw1"
quiet_runs 2 3
diff_pairs 1 2 3
$M compare "$PWD/tests/sim/measured/h100-sxm.toml" "$O/t1.toml" > "$O/compare-old.txt" 2>&1
pack
