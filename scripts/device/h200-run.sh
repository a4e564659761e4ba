#!/usr/bin/env bash
# A verbose default run (stamped), then three quiet default runs t2..t4 and their diffs.
source "$(dirname "$0")/common.sh" g
verbose_run
quiet_runs 2 3 4
diff_pairs 2 3 4
pack
