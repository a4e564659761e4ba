# Sourced by the device scripts: memtopo from the carried bundle, OUTDIR under $OUT, and the
# steps they share. Usage: source "$(dirname "$0")/common.sh" NAME  (NAME: the tarball's name)
set -u
export LD_LIBRARY_PATH=$PWD/.carry/memtopo/.bundle-libs:${LD_LIBRARY_PATH:-}
M=$PWD/.carry/memtopo/bin/memtopo
NAME=$1
O=$OUT/$NAME
mkdir -p "$O"
nvidia-smi -L > "$O/smi.txt"
# Each line of stdin with the seconds since the first.
stamp() { python3 -u -c "import sys,time
t0=time.time()
for l in sys.stdin: print(f'{time.time()-t0:8.3f} {l}', end='')"; }
# memtopo run -v ARGS... into $O/t1.toml, stamped, its wall time in times.txt.
verbose_run() {
  local s e; s=$(date +%s.%N); $M run -v "$@" -o "$O/t1.toml" 2>&1 | stamp > "$O/t1.log"; e=$(date +%s.%N)
  echo "t1 $(python3 -c "print(round($e-$s,2))") s (-v)" >> "$O/times.txt"
}
# Quiet default runs tN.toml for each N given, each timed.
quiet_runs() {
  local i s e rc
  for i in "$@"; do
    s=$(date +%s.%N); $M run -q -o "$O/t$i.toml" > "$O/t$i.log" 2>&1; rc=$?; e=$(date +%s.%N)
    echo "t$i rc $rc $(python3 -c "print(round($e-$s,2))") s" >> "$O/times.txt"
  done
}
# memtopo diff of every pair of tN.toml.
diff_pairs() {
  local a b
  for a in "$@"; do for b in "$@"; do
    [ "$a" -lt "$b" ] || continue
    echo "== t$a t$b" >> "$O/diffs.txt"; $M diff "$O/t$a.toml" "$O/t$b.toml" >> "$O/diffs.txt" 2>&1
  done; done
}
# The one tarball $OUT gets.
pack() { (cd "$OUT" && tar czf "$NAME.tgz" "$NAME" && rm -rf "$NAME"); }
