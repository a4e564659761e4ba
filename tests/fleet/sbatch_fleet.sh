#!/usr/bin/env bash
# scripts/fleet.sbatch as docs/fleet.md shows it, run as Slurm would run it on one node of four
# tasks: a stand-in `srun` (CI has no Slurm) starts the tasks with the variables srun sets, each
# task measures its local rank's simulated device, and the script's summary must flag exactly
# the device that differs.
set -euo pipefail
exe=$1 source_dir=$2 work=$3
. "$(dirname "$0")/fleet_common.sh"
make_fleet_devices
mkdir -p "$work/bin"
ln -sf "$exe" "$work/bin/memtopo"
cat >"$work/bin/srun" <<'SRUN'
#!/usr/bin/env bash
# Four tasks on node 0 of step 0, as `srun` starts them under --ntasks-per-node=4.
pids=()
for rank in 0 1 2 3; do
  SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=4 SLURM_STEP_NUM_TASKS=4 SLURM_LOCALID=$rank \
    SLURM_PROCID=$rank "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
SRUN
chmod +x "$work/bin/srun"
config="$work/fleet-probes.toml"
printf '[run]\nprobes = ["device-info", "global-throughput/streams", "global-throughput/latency-spectrum", "mlp", "tlb/levels", "data-cache/l2-size", "data-cache/l2-occupancy"]\n[probes."global-throughput/streams"]\nseries = ["dram_read", "l2_read"]\n' >"$config"
set +e
(cd "$work" && PATH="$work/bin:$PATH" SLURM_JOB_ID=7 MEMTOPO_CONFIG="$config" MEMTOPO_DEVICE="$devices" \
   bash "$source_dir/scripts/fleet.sbatch" >"$work/log.txt" 2>&1)
rc=$?
set -e
cat "$work/log.txt"
[ "$rc" -eq 1 ] || { echo "fleet.sbatch exited $rc; the summary exits 1 when a GPU is flagged"; exit 1; }
grep -q "FLAGGED" "$work/fleet-7/fleet.txt" || { echo "fleet.txt flags nothing"; exit 1; }
grep -q "<testsuite" "$work/fleet-7/fleet.xml" || { echo "no JUnit summary"; exit 1; }
"$exe" fleet --format json -o "$work/fleet.json" "$work/fleet-7" >/dev/null || true
check_fleet_result "$work/fleet-7" "$work/fleet.json" "$exe"
