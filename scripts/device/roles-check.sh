#!/usr/bin/env bash
# A default run of GPU 0 checked as a file: its keys' roles (ABI 3.9) counted, the file
# validated, drawn and exported to MT4G's layout. Usage: bash scripts/device/roles-check.sh [NAME]
source "$(dirname "$0")/common.sh" "${1:-roles}"
s=$(date +%s.%N); $M run -q -o "$O/t1.toml" > "$O/t1.log" 2>&1; rc=$?; e=$(date +%s.%N)
echo "t1 rc $rc $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
echo "roles: $(grep -c 'role = ' "$O/t1.toml")" >> "$O/times.txt"
$M validate "$O/t1.toml" > "$O/validate.txt" 2>&1
$M draw "$O/t1.toml" > "$O/draw.txt" 2>&1
$M export --format mt4g -o "$O/t1.mt4g.json" "$O/t1.toml" > "$O/export.txt" 2>&1
pack
