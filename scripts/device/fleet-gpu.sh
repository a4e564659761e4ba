#!/usr/bin/env bash
# Issue 62 on a host of four GPUs: three default runs and five acceptance runs of every GPU,
# memtopo fleet over each (and --confirm), then one GPU under a stream load.
set -u
export LD_LIBRARY_PATH=$PWD/.carry/memtopo/.bundle-libs:${LD_LIBRARY_PATH:-}
M=$PWD/.carry/memtopo/bin/memtopo
LOAD=$PWD/.carry/memtopo/bin/memtopo-gpu-stream-load
O=$OUT/${1:-f}; mkdir -p $O
nvidia-smi -L > $O/smi.txt
t() { local s=$(date +%s.%N); "$@"; local rc=$?; echo "$(python3 -c "import time;print(f'{time.time()-$s:.1f}')") s rc $rc: $*" >> $O/times.txt; return $rc; }
for i in 1 2 3; do
  t $M run -q --device all -o $O/d$i/ > $O/d$i.log 2>&1
  t $M fleet $O/d$i > $O/d$i.fleet.txt 2>&1
  t $M fleet --confirm $O/d$i > $O/d$i.confirm.txt 2>&1
done
for i in 1 2 3 4 5; do
  t $M run -q --config configs/acceptance.toml --device all -o $O/a$i/ > $O/a$i.log 2>&1
  t $M fleet $O/a$i > $O/a$i.fleet.txt 2>&1
done
$LOAD 1 100 > $O/load-stream.log 2>&1 &
sleep 3
t $M run -q --config configs/acceptance.toml --device all -o $O/load/ > $O/load.log 2>&1
t $M fleet $O/load > $O/load.fleet.txt 2>&1
t $M fleet --confirm $O/load > $O/load.confirm.txt 2>&1
wait
cat $O/times.txt
grep -h "flagged (" $O/*.fleet.txt $O/*.confirm.txt
cd $OUT && tar czf ${1:-f}.tgz ${1:-f} && rm -rf ${1:-f}
