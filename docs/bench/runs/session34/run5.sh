#!/bin/bash
# Session 34, device call 5 (run4.sh with d3 in place of d1/d2): where the one graph's extra device time goes. Replayed-step device time,
# the new library with a capture a position (baked) and one graph (one), and two measurement builds
# of one graph: d1 = attention cuts its rows from the host's n_ctx (no load of the device position),
# d2 = the RoPE + row-store kernel takes the host's position (no load). Rotated, three rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
new=.dev/s34/new
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen3-0.6b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $new/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
echo "models $(at)"
b=$o/ab.log
: > $b
run() {  # LABEL LIBDIR ENV MODEL CTX MODE [nofill]
  echo "[$1]" >> $b
  env ALAP_GPU_LIBRARY=$PWD/$2/libalap_gpu.so ALAP_BENCH_SAMPLE=1 $3 timeout 60 $new/forward_gpu_device bench "$m/$4.gguf" "$5" "$6" -1 ${7:-} 2>&1 |
    grep -v '^device:' >> $b
}
four() {
  for i in 1 2 3; do
    run baked $new ALAP_GPU_ONE_GRAPH=0 "$@"
    run one $new ALAP_GPU_ONE_GRAPH=1 "$@"
    run d3baked .dev/s34/d3 ALAP_GPU_ONE_GRAPH=0 "$@"
    run d3one .dev/s34/d3 ALAP_GPU_ONE_GRAPH=1 "$@"
  done
}
four llama3-8b-q4_k 4096 k8 nofill
four llama3-8b-q4_k 4096 f16 nofill
four qwen3-0.6b-q4_k 4096 k8 nofill
four llama3.2-1b-q4_k 4096 f16 nofill
four qwen2.5-0.5b-q4_k 4096 k8 nofill
four llama3-8b-q4_k 32768 k8 nofill
awk '/^\[/{e=$0} /^bench /{n=split($2,a,"/"); mm=a[n]; c=$4; md=$5; t=$0; sub(/.*decode /,"",t); sub(/ tok\/s.*/,"",t)}
     /as a graph replayed/{r=$0; sub(/.*token in the loop, /,"",r); sub(/ us as a graph.*/,"",r); print mm, c, md, e, t " tok/s", r " us replayed"}' $b > $o/summary.txt
python3 - $o/summary.txt <<'PY' | tee $o/medians.txt
import sys, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f = l.split()
    d[(f[0], f[1], f[2])][f[3]].append((float(f[4]), float(f[6])))
for key, hows in d.items():
    print(*key, " | ".join(f"{h} {statistics.median(x[0] for x in v):.0f} tok/s {statistics.median(x[1] for x in v):.1f} us"
                         for h, v in hows.items()))
PY
echo "done $(at)"
