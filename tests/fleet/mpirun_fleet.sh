#!/usr/bin/env bash
# The fleet under mpirun (docs/fleet.md, "Open MPI"): four ranks on one machine, each measuring
# its own simulated device of one --device list; rank 0 compares them and must flag exactly the
# device that differs (a smaller L2, a slower DRAM). Exit 77 (skipped) without mpirun.
set -euo pipefail
exe=$1 source_dir=$2 work=$3
command -v mpirun >/dev/null || { echo "mpirun not found: install openmpi-bin (scripts/setup.sh)"; exit 77; }
. "$(dirname "$0")/fleet_common.sh"
make_fleet_devices
# Open MPI refuses root without these, and a container's ptrace rules break its single-copy path.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
set +e
# The acceptance run's probes (configs/acceptance.toml) and the L2's first miss; of the streams,
# the DRAM and L2 reads the check compares.
printf '[probes."global-throughput/streams"]\nseries = ["dram_read", "l2_read"]\n' >"$work/streams.toml"
mpirun --oversubscribe --bind-to none -n 4 "$exe" run -q --config "$work/streams.toml" \
  --only device-info,global-throughput/streams,global-throughput/latency-spectrum,mlp,tlb/levels,data-cache/l2-size,data-cache/l2-occupancy --device "$devices" -o "$work/out/" \
  >"$work/log.txt" 2>&1
rc=$?
set -e
cat "$work/log.txt"
[ "$rc" -eq 1 ] || { echo "mpirun exited $rc; rank 0 exits 1 when a GPU is flagged"; exit 1; }
check_fleet_result "$work/out" "$work/out/fleet.json" "$exe"
