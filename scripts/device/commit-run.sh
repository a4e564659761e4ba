#!/usr/bin/env bash
# The run to commit (memtopo run -v --raw-dir raw1 -o t1.toml, stamped), two default runs, diffs.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/memtopo/.bundle-libs:${LD_LIBRARY_PATH:-}
M=$PWD/.carry/memtopo/bin/memtopo
O=$OUT/c; mkdir -p $O
nvidia-smi -L > $O/smi.txt
stamp() { python3 -u -c "import sys,time
t0=time.time()
for l in sys.stdin: print(f'{time.time()-t0:8.3f} {l}', end='')"; }
s=$(date +%s.%N); $M run -v --raw-dir $O/raw1 -o $O/t1.toml 2>&1 | stamp > $O/t1.log; e=$(date +%s.%N)
echo "t1 $(python3 -c "print(round($e-$s,2))") s (-v)" >> $O/times.txt
for i in 2 3; do
  s=$(date +%s.%N); $M run -q -o $O/t$i.toml > $O/t$i.log 2>&1; rc=$?; e=$(date +%s.%N)
  echo "t$i rc $rc $(python3 -c "print(round($e-$s,2))") s" >> $O/times.txt
done
for p in "1 2" "1 3" "2 3"; do set -- $p; echo "== t$1 t$2" >> $O/diffs.txt; $M diff $O/t$1.toml $O/t$2.toml >> $O/diffs.txt 2>&1; done
$M compare $PWD/tests/sim/measured/h100-sxm.toml $O/t1.toml > $O/compare-old.txt 2>&1
cd $OUT && tar czf c.tgz c && rm -rf c
