#!/usr/bin/env bash
# A verbose default run (stamped: time per probe, debug lines), two quiet default runs, diffs.
source "$(dirname "$0")/common.sh" g
verbose_run
quiet_runs 2 3
diff_pairs 1 2 3
pack
