#!/usr/bin/env bash
# A default run timed per probe (-v, stamped), three quiet default runs, their diffs.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/memtopo/.bundle-libs:${LD_LIBRARY_PATH:-}
M=$PWD/.carry/memtopo/bin/memtopo
O=$OUT/g; mkdir -p $O
nvidia-smi -L > $O/smi.txt
stamp() { python3 -u -c "import sys,time
t0=time.time()
for l in sys.stdin: print(f'{time.time()-t0:8.3f} {l}', end='')"; }
$M run -v -o $O/v1.toml 2>&1 | stamp > $O/v1.log
for i in 1 2 3; do
  s=$(date +%s.%N); $M run -q -o $O/t$i.toml > $O/t$i.log 2>&1; rc=$?; e=$(date +%s.%N)
  echo "t$i rc $rc $(python3 -c "print(round($e-$s,2))") s" >> $O/times.txt
done
for p in "1 2" "1 3" "2 3"; do set -- $p; echo "== t$1 t$2" >> $O/diffs.txt; $M diff $O/t$1.toml $O/t$2.toml >> $O/diffs.txt 2>&1; done
cd $OUT && tar czf g.tgz g && rm -rf g
