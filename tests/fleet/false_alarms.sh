#!/usr/bin/env bash
# A fleet of simulated GPUs of one model that differ only in how they were built (floor
# sweeping: which SMs form each GPC) and in their runs' noise (another seed) flags none; with one GPU of half
# the L2, one of a slower DRAM, one whose PCIe link trained x8 of x16 and one whose run recorded
# another process on the GPU, it flags exactly those four, each with its cause (docs/fleet.md, "How a GPU is flagged"); a deviation
# planted in one file, and the other process recorded in another, are dropped when `fleet
# --confirm` measures those GPUs again.
set -euo pipefail
exe=$1 source_dir=$2 work=$3
rm -rf "$work" && mkdir -p "$work/devices" "$work/healthy" "$work/faulty"
example="$source_dir/examples/devices/hopper-like.toml"
variant() {  # NAME SEED GPC_OF_SM [sed expressions...]
  local name=$1 seed=$2 gpcs=$3
  shift 3
  sed -e "s/^seed = 1$/seed = $seed/" -e "s/^noise_cycles = 0 .*/noise_cycles = 2\nnoise_distribution = \"geometric\"/" \
      -e "s/^sm_per_gpc = 4$/gpc_of_sm = $gpcs/" "$@" "$example" >"$work/devices/$name.toml"
}
variant a 1 "[0, 0, 0, 0, 1, 1, 1, 1]"
variant b 2 "[0, 1, 0, 1, 0, 1, 0, 1]"
variant c 3 "[0, 0, 1, 1, 0, 0, 1, 1]"
variant d 4 "[1, 1, 1, 1, 0, 0, 0, 0]"
variant half_l2 5 "[0, 0, 0, 0, 1, 1, 1, 1]" -e 's/^size_bytes = 2097152/size_bytes = 1048576/' -e 's/^sets = 1024 .*/sets = 512/'
variant slow_dram 6 "[0, 1, 0, 1, 0, 1, 0, 1]" \
    -e 's/^dram_read_bytes_per_second = .*/dram_read_bytes_per_second = 150000000000.0/'
# A link that trained 8 lanes wide in a slot of 16: flagged for its link alone.
variant narrow_link 7 "[0, 0, 1, 1, 0, 0, 1, 1]" -e 's/^pcie_width_lanes = 16$/pcie_width_lanes = 8\npcie_width_max_lanes = 16/'
probes="device-info,links,global-throughput/streams,data-cache/l2-size,data-cache/l2-occupancy"
# DRAM's and the L2's reads are the streams the fleet needs here (the other series cost a default
# run's streams four times their time).
printf '[probes."global-throughput/streams"]\nseries = ["dram_read", "l2_read"]\n' >"$work/streams.toml"
"$exe" list >"$work/probes.txt"  # (not piped into grep -q: pipefail would see list's SIGPIPE)
grep -q "^hopper-dsmem/clusters " "$work/probes.txt" && probes="$probes,hopper-dsmem/clusters"
list() { local d out=""; for d in "$@"; do out="$out${out:+,}sim:$work/devices/$d.toml"; done; echo "$out"; }
"$exe" run -q --jobs 2 --only "$probes" --config "$work/streams.toml" --device "$(list a b c d half_l2 slow_dram narrow_link)" -o "$work/runs/" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; echo "the fleet run failed"; exit 1; }
for d in a b c d; do cp "$work"/runs/*-sim-$d.toml "$work/healthy/"; done
cp "$work"/runs/*.toml "$work/faulty/"
# The run of GPU d again, as if another process had held the GPU: its [meta.gpu_state] says so.
busy=$(ls "$work"/faulty/*-sim-d.toml)
python3 - "$busy" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
state = '[meta.gpu_state]\n'
assert state in text, "no [meta.gpu_state]"
text = text.replace(state, state + 'start_compute_processes = 2\nstart_utilization_percent = 100\n', 1)
open(path, "w").write(text)
PY
# And GPU a's DRAM read rate 20 % low in its file, as one disturbed run would read: flagged by
# the fleet, not reproduced when measured again (fleet --confirm), so dropped.
planted=$(ls "$work"/faulty/*-sim-a.toml)
python3 - "$planted" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path).read()
m = re.search(r"\ndram_read_bytes_per_second = ([0-9.e+]+)\n", text)
assert m, "no DRAM read rate"
text = text.replace(m.group(0), "\ndram_read_bytes_per_second = %r\n" % (float(m.group(1)) * 0.8), 1)
open(path, "w").write(text)
PY
set +e
"$exe" fleet "$work/healthy" >"$work/healthy.txt" 2>&1
healthy_rc=$?
"$exe" fleet --format json -o "$work/faulty.json" "$work/faulty" >"$work/faulty.log" 2>&1
"$exe" fleet "$work/faulty" >"$work/faulty.txt" 2>&1
"$exe" fleet --confirm --format json -o "$work/confirmed.json" "$work/faulty" >"$work/confirmed.log" 2>&1
confirmed_rc=$?
set -e
cat "$work/healthy.txt" "$work/faulty.txt" "$work/confirmed.log"
[ "$healthy_rc" -eq 0 ] || { echo "healthy GPUs that differ in floor sweeping and noise were flagged (exit $healthy_rc)"; exit 1; }
grep -q "configuration" "$work/healthy.txt" || { echo "the GPC sizes are not shown as configuration"; exit 1; }
[ "$confirmed_rc" -eq 1 ] || { echo "fleet --confirm exited $confirmed_rc, not 1"; exit 1; }
ls "$work"/faulty/memtopo-confirm/*/*-sim-a-again.toml >/dev/null || { echo "the measurements again were not kept"; exit 1; }
python3 - "$work/faulty.json" "$work/confirmed.json" <<'PY'
import json, sys
fleet = json.load(open(sys.argv[1]))
flagged = sorted(g["file"].rsplit("-sim-", 1)[1][:-5] for g in fleet["gpus"] if g["flagged"])
assert flagged == ["a", "d", "half_l2", "narrow_link", "slow_dram"], flagged
confirmed = json.load(open(sys.argv[2]))
kept = {g["file"].rsplit("-sim-", 1)[1][:-5]: g for g in confirmed["gpus"]}
# d measured again is idle and as its siblings: its state is not reproduced, and it is not flagged.
assert sorted(k for k, g in kept.items() if g["flagged"]) == ["half_l2", "narrow_link", "slow_dram"], kept.keys()
planted = [f for f in kept["a"]["findings"] if f["key"] == "throughput.dram_read_bytes_per_second"]
assert planted and planted[0]["not_flagged"] == "not reproduced", planted
slow = [f for f in kept["slow_dram"]["findings"] if f["key"] == "throughput.dram_read_bytes_per_second"]
assert slow and slow[0]["flagged"] and slow[0]["confirmation"].startswith("confirmed in 2 of 2"), slow
print("confirmed", sorted(k for k, g in kept.items() if g["flagged"]), "dropped a's planted deviation and d's state")
by = {g["file"].rsplit("-sim-", 1)[1][:-5]: [f for f in g["findings"] if f["flagged"]] for g in fleet["gpus"]}
assert by["d"][0]["kind"] == "state" and "processes" in by["d"][0]["value"], by["d"]
assert any(f["key"].startswith("l2.") for f in by["half_l2"]), by["half_l2"]
assert any(f["key"] == "throughput.dram_read_bytes_per_second" for f in by["slow_dram"]), by["slow_dram"]
link = by["narrow_link"]
assert link[0]["kind"] == "health" and link[0]["key"] == "attachment.pcie_link", link
assert "x8, below its maximum Gen5 x16" in link[0]["value"], link[0]
# Its copies move half, the cause named first; nothing else of it differs.
assert {f["key"].split(".")[0] for f in link} <= {"attachment", "link"}, link
print("flagged", flagged)
PY
