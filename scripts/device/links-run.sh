#!/usr/bin/env bash
# The GPU in its host (docs/links.md) on a host of one or more GPUs: the links probes of each
# GPU three times, the plain-CUDA copy check of each, a default run of GPU 0 with the others
# visible (peer copies), one default run of every GPU at once with memtopo fleet over it, that
# run exported onto the host's hwloc topology (export --hwloc) and read back by
# scripts/device/hwloc_tree.c (where a compiler is), and GPU 0's drawing.
# Usage: bash scripts/device/links-run.sh [NAME]
source "$(dirname "$0")/common.sh" "${1:-links}"
C=$PWD/.carry/memtopo/bin/memtopo-link-copy
nvidia-smi topo -m > "$O/topo.txt" 2>&1
nvidia-smi -q | grep -E "GPU UUID|Bus Id|PCIe Generation|Link Width|Max|Current" > "$O/smi-pcie.txt" 2>&1
n=$(nvidia-smi -L | wc -l)
for g in $(seq 0 $((n - 1))); do
  for i in 1 2 3; do
    $M run -q --device "cuda:$g" --only links -o "$O/links-$g-$i.toml" > "$O/links-$g-$i.log" 2>&1
  done
  $C "$g" > "$O/bench-$g.txt" 2>&1
  $C "$g" >> "$O/bench-$g.txt" 2>&1
done
s=$(date +%s.%N); $M run -q --device cuda:0 -o "$O/t0.toml" > "$O/t0.log" 2>&1; e=$(date +%s.%N)
echo "default run, GPU 0: $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
$M draw "$O/t0.toml" > "$O/draw.txt" 2>&1
$M draw -o "$O/draw.svg" "$O/t0.toml" > /dev/null 2>&1
s=$(date +%s.%N); $M run -q --device all -o "$O/all/" > "$O/all.log" 2>&1; e=$(date +%s.%N)
echo "default run, every GPU: $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
$M fleet "$O/all" > "$O/fleet.txt" 2>&1
$M export --hwloc -o "$O/host.xml" "$O"/all/*.toml > "$O/export-hwloc.log" 2>&1
if command -v cc > /dev/null && cc -O2 -o "$O/hwloc-tree" scripts/device/hwloc_tree.c -lhwloc 2> "$O/hwloc-cc.txt"; then
  "$O/hwloc-tree" > "$O/hwloc.txt" 2>&1
  "$O/hwloc-tree" "$O/host.xml" > "$O/hwloc-export.txt" 2>&1
  rm -f "$O/hwloc-tree"
fi
pack
