#!/usr/bin/env bash
# A default run of GPU 0 read by the host's tools twice: through the roles its file records, and
# through the shipped plugins' roles (the same file with the roles taken out, as a file written
# before ABI 3.9 reads). Each tool's output must be the same both ways (docs/roles.md).
# Usage: bash scripts/device/roles-read-check.sh [NAME]
source "$(dirname "$0")/common.sh" "${1:-roles-read}"
quiet_runs 1
mkdir -p "$O/with" "$O/without"
cp "$O/t1.toml" "$O/with/t.toml"
sed -E 's/, role = "[^"]*"//' "$O/t1.toml" > "$O/without/t.toml"
echo "roles: $(grep -c 'role = ' "$O/with/t.toml") with, $(grep -c 'role = ' "$O/without/t.toml") without" >> "$O/times.txt"
for d in with without; do
  (cd "$O/$d" && {
    $M draw t.toml > draw.txt 2>&1
    $M export --accel-sim -o accel-sim.config t.toml > export.log 2>&1
    $M export --format mt4g -o mt4g.json t.toml >> export.log 2>&1
    $M export --hwloc -o hwloc.xml t.toml >> export.log 2>&1
    $M compare t.toml > compare.txt 2>&1
    $M fleet t.toml > fleet.txt 2>&1
  })
done
for f in draw.txt accel-sim.config mt4g.json hwloc.xml compare.txt fleet.txt; do
  if cmp -s "$O/with/$f" "$O/without/$f"; then echo "same: $f ($(wc -l < "$O/with/$f") lines)"; else echo "DIFFERS: $f"; fi
done >> "$O/times.txt"
pack
