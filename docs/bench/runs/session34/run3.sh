#!/bin/bash
# Session 34, device call 3: as call 2 after rope_store_1 reads the device position before its
# programmatic-dependent wait; three pairs a row; qwen3 against the previous library and program
# (ad75bf2, built from that commit: q/k norms, RoPE and stores as 5 launches, a capture a position).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
new=.dev/s34/new old=.dev/s34/old
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
run() {  # LABEL DIR ENV MODEL CTX MODE [nofill]
  echo "[$1]" >> $b
  env ALAP_GPU_LIBRARY=$PWD/$2/libalap_gpu.so ALAP_BENCH_SAMPLE=1 $3 timeout 60 $2/forward_gpu_device bench "$m/$4.gguf" "$5" "$6" -1 ${7:-} 2>&1 |
    grep -v '^device:' >> $b
}
ab() {  # MODEL CTX MODE [nofill]
  for i in 1 2 3; do
    run baked $new ALAP_GPU_ONE_GRAPH=0 "$@"
    run one $new ALAP_GPU_ONE_GRAPH=1 "$@"
  done
}
abc() {
  for i in 1 2 3; do
    run old $old X=1 "$@"
    run baked $new ALAP_GPU_ONE_GRAPH=0 "$@"
    run one $new ALAP_GPU_ONE_GRAPH=1 "$@"
  done
}
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
  for mode in k8 f16; do ab $model 4096 $mode; ab $model 32768 $mode nofill; done
  echo "$model $(at)"
done
abc qwen3-0.6b-q4_k 4096 k8; abc qwen3-0.6b-q4_k 32768 k8 nofill; abc qwen3-0.6b-q4_k 4096 f16
echo "qwen3 $(at)"
ab llama3-8b-q4_k 4096 k8; ab llama3-8b-q4_k 32768 k8 nofill; ab llama3-8b-q4_k 4096 f16
echo "8B $(at)"
awk '/^\[/{e=$0} /^bench /{n=split($2,a,"/"); mm=a[n]; c=$4; md=$5; t=$0; sub(/.*decode /,"",t); sub(/ tok\/s.*/,"",t)}
     /as a graph replayed/{r=$0; sub(/.*token in the loop, /,"",r); sub(/ us as a graph.*/,"",r); print mm, c, md, e, t " tok/s", r " us replayed"}' $b > $o/summary.txt
python3 - $o/summary.txt <<'PY' | tee $o/medians.txt
import sys, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    f = l.split()
    key = (f[0], f[1], f[2]); how = f[3]
    d[key][how].append((float(f[4]), float(f[6])))
for key, hows in d.items():
    parts = []
    for how in ("[old]", "[baked]", "[one]"):
        if how in hows:
            t = statistics.median(x[0] for x in hows[how]); r = statistics.median(x[1] for x in hows[how])
            parts.append(f"{how} {t:.0f} tok/s {r:.1f} us")
    print(*key, " | ".join(parts))
PY
echo "done $(at)"
