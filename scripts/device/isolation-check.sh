#!/usr/bin/env bash
# Does a value depend on which other probes ran? Two quiet default runs t1, t2, their diff,
# then each plugin alone (`--only PLUGIN`, with what it needs) into only-PLUGIN.toml.
# Compare at home: scripts/isolation-diff.py OUTDIR
source "$(dirname "$0")/common.sh" iso
quiet_runs 1 2
diff_pairs 1 2
for p in $($M list | awk '/^[a-z]/ {split($1, f, "/"); print f[1]}' | sort -u); do
  s=$(date +%s.%N); $M run -q --only "$p" -o "$O/only-$p.toml" > "$O/only-$p.log" 2>&1; rc=$?; e=$(date +%s.%N)
  echo "only-$p rc $rc $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
done
pack
