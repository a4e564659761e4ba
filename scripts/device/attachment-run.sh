#!/usr/bin/env bash
# The GPU's attachment in default runs (docs/links.md): two default runs and one of the links
# probes alone, their [attachment] side by side with nvidia-smi's view, the runs diffed, GPU 0
# drawn. Usage: bash scripts/device/attachment-run.sh [NAME]
source "$(dirname "$0")/common.sh" "${1:-attachment}"
nvidia-smi nvlink -s > "$O/smi-nvlink.txt" 2>&1
nvidia-smi -q | grep -E "GPU UUID|Bus Id|PCIe Generation|Link Width|Max|Current" > "$O/smi-pcie.txt" 2>&1
nvidia-smi topo -m > "$O/topo.txt" 2>&1
verbose_run
quiet_runs 2
$M run -q --only links -o "$O/links.toml" > "$O/links.log" 2>&1
diff_pairs 1 2
$M draw "$O/t1.toml" > "$O/draw.txt" 2>&1
for f in t1 t2 links; do
  echo "== $f"; sed -n '/^\[attachment\]/,/^\[/p' "$O/$f.toml"; grep -A3 'links/attachment' "$O/$f.toml" | head -20
  sed -n '/^\[meta.gpu_state\]/,/^\[/p' "$O/$f.toml" | head -12
done > "$O/attachment.txt" 2>&1
pack
