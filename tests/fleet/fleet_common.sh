# Shared by the fleet tests: four simulated devices of one model, one of which differs (a smaller
# L2, a slower DRAM), and the check that a fleet summary flags exactly that one, by those keys.
# Source it with $work and $source_dir set.

make_fleet_devices() {
  rm -rf "$work" && mkdir -p "$work/devices"
  local example="$source_dir/examples/devices/hopper-like.toml"
  for d in a b c; do cp "$example" "$work/devices/$d.toml"; done
  sed -e 's/^size_bytes = 2097152/size_bytes = 1572864/' -e 's/^sets = 1024 .*/sets = 768/' \
      -e 's/^dram_read_bytes_per_second = .*/dram_read_bytes_per_second = 150000000000.0/' "$example" >"$work/devices/odd.toml"
  cmp -s "$example" "$work/devices/odd.toml" && { echo "the odd device is not odd"; return 1; }
  devices="sim:$work/devices/a.toml,sim:$work/devices/b.toml,sim:$work/devices/c.toml,sim:$work/devices/odd.toml"
}

# The four topologies in $1 are valid, and the fleet summary $2 (JSON) flags the odd one alone.
check_fleet_result() {
  local folder=$1 summary=$2 exe=$3 d f
  for d in a b c odd; do
    f=$(ls "$folder"/*-sim-$d.toml) || { echo "no topology of device $d"; return 1; }
    "$exe" validate "$f" >/dev/null
  done
  python3 - "$summary" <<'PY'
import json, sys
fleet = json.load(open(sys.argv[1]))
flagged = [g["file"] for g in fleet["gpus"] if g["flagged"]]
assert fleet["gpus_total"] == 4, fleet["gpus_total"]
assert len(flagged) == 1 and flagged[0].endswith("-sim-odd.toml"), flagged
keys = {f["key"] for g in fleet["gpus"] if g["flagged"] for f in g["findings"] if f["flagged"]}
# The L2's size (rated) flags it; its full miss, an estimate no table rates here, is reported.
assert "throughput.dram_read_bytes_per_second" in keys and "l2.size_bytes" in keys, keys
print("flagged", flagged[0], "by", sorted(keys))
PY
}
