#!/usr/bin/env bash
# The attachment and links of a host of several GPUs in default runs (docs/links.md): two
# default runs of GPU 0 (peers visible), one of every GPU at once, `fleet` over it, the runs
# diffed, the plain-CUDA copy check of GPU 0. Usage: bash scripts/device/attachment-fleet.sh [NAME]
source "$(dirname "$0")/common.sh" "${1:-attachment-fleet}"
nvidia-smi nvlink -s > "$O/smi-nvlink.txt" 2>&1
nvidia-smi topo -m > "$O/topo.txt" 2>&1
verbose_run --device cuda:0
quiet_runs 2
diff_pairs 1 2
$PWD/.carry/memtopo/bin/memtopo-link-copy 0 > "$O/bench-0.txt" 2>&1
s=$(date +%s.%N); $M run -q --device all -o "$O/all/" > "$O/all.log" 2>&1; e=$(date +%s.%N)
echo "every GPU: $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
$M fleet "$O/all" > "$O/fleet.txt" 2>&1
$M draw "$O/t1.toml" > "$O/draw.txt" 2>&1
for f in "$O"/t1.toml "$O"/t2.toml "$O"/all/*.toml; do
  echo "== $f"; sed -n '/^\[attachment\]/,/^$/p;/^\[link\]/,/^$/p' "$f"
done > "$O/attachment.txt" 2>&1
pack
