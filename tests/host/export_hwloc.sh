#!/usr/bin/env bash
# memtopo export --hwloc on a synthetic host (HWLOC_SYNTHETIC: two packages of two cores): the
# topology measured on the simulated GPU and the committed H100's attached to it, read back by
# READER (hwloc_tree.c over libhwloc, or lstopo-no-graphics), which must list each GPU with its
# L2 and L1 as memtopo measured them: their sizes in the objects' names, every cache key as an
# info attribute. Usage: export_hwloc.sh MEMTOPO READER SOURCE_DIR WORK_DIR
set -euo pipefail
exe=$1 reader=$2 src=$3 work=$4
command -v "$reader" > /dev/null || { echo "SKIPPED: $reader is not installed (Debian's hwloc package)"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
sim=$src/tests/sim/measured/hopper-like-sim.toml
h100=$src/tests/sim/measured/h100-sxm.toml
HWLOC_SYNTHETIC="pack:2 core:2 pu:1" "$exe" export --hwloc -o "$work/host.xml" "$sim" "$h100"
case $(basename "$reader") in
  lstopo*) "$reader" --input "$work/host.xml" -v > "$work/tree.txt" ;;
  *) "$reader" "$work/host.xml" > "$work/tree.txt" ;;
esac
python3 - "$work/tree.txt" "$sim" "$h100" <<'PY'
import sys, tomllib
tree = open(sys.argv[1]).read()
def words(b):
    units, u = ["B", "KiB", "MiB", "GiB", "TiB"], 0
    while b >= 1024 and u < 4:
        b /= 1024; u += 1
    return "%.4g %s" % (b, units[u])
assert "Package" in tree or "Pack" in tree, "the synthetic host is not in the tree"
for path in sys.argv[2:]:
    t = tomllib.load(open(path, "rb"))
    gpu = "GPU %s (memtopo)" % t["device"]["name"]
    assert gpu in tree, (gpu, tree[:2000])
    for element in ("l2", "l1d"):
        name = "%s %s" % (element, words(t[element]["size_bytes"]))
        assert name in tree, (name, path)
        for part in ("line_bytes", "latency_cycles"):
            v = t[element][part]
            text = "%s.%s=%s" % (element, part, "%.10g" % v)
            assert text in tree or text.replace("=", '="', 1) + '"' in tree, (text, path)
    print(path.rsplit("/", 1)[1], ": ", gpu, ", its L2 and L1 listed", sep="")
PY
