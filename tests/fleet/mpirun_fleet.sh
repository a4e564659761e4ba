#!/usr/bin/env bash
# The fleet under mpirun (docs/fleet.md, "Many nodes"): four ranks on one machine, each measuring
# its own simulated device of one --device list; rank 0 compares them and must flag exactly the
# device that differs (a smaller L2, a slower DRAM). Exit 77 (skipped) without mpirun.
set -euo pipefail
exe=$1 source_dir=$2 work=$3
command -v mpirun >/dev/null || { echo "mpirun not found: install openmpi-bin (scripts/setup.sh)"; exit 77; }
rm -rf "$work" && mkdir -p "$work/devices"
example="$source_dir/examples/devices/hopper-like.toml"
for d in a b c; do cp "$example" "$work/devices/$d.toml"; done
sed -e 's/^size_bytes = 8388608/size_bytes = 6291456/' -e 's/^sets = 4096 .*/sets = 3072/' \
    -e 's/^dram_read_bytes_per_second = .*/dram_read_bytes_per_second = 150000000000.0/' "$example" >"$work/devices/odd.toml"
cmp -s "$example" "$work/devices/odd.toml" && { echo "the odd device is not odd"; exit 1; }
devices="sim:$work/devices/a.toml,sim:$work/devices/b.toml,sim:$work/devices/c.toml,sim:$work/devices/odd.toml"
# Open MPI refuses root without these, and a container's ptrace rules break its single-copy path.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
set +e
# The acceptance run's probes (configs/acceptance.toml) and the L2's first miss.
mpirun --oversubscribe --bind-to none -n 4 "$exe" run -q \
  --only device-info,global-throughput,mlp,tlb/levels,data-cache/l2-size --device "$devices" -o "$work/out/" \
  >"$work/log.txt" 2>&1
rc=$?
set -e
cat "$work/log.txt"
[ "$rc" -eq 1 ] || { echo "mpirun exited $rc; rank 0 exits 1 when a GPU is flagged"; exit 1; }
for d in a b c odd; do
  f=$(ls "$work"/out/*-sim-$d.toml) || { echo "no topology of device $d"; exit 1; }
  "$exe" validate "$f" >/dev/null
done
python3 - "$work/out/fleet.json" <<'PY'
import json, sys
fleet = json.load(open(sys.argv[1]))
flagged = [g["file"] for g in fleet["gpus"] if g["flagged"]]
assert fleet["gpus_total"] == 4, fleet["gpus_total"]
assert len(flagged) == 1 and flagged[0].endswith("-sim-odd.toml"), flagged
keys = {f["key"] for g in fleet["gpus"] if g["flagged"] for f in g["findings"] if f["flagged"]}
assert "throughput.dram_read_bytes_per_second" in keys and "l2.first_miss_bytes" in keys, keys
print("rank 0 flagged", flagged[0], "by", sorted(keys))
PY
