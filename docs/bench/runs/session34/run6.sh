#!/bin/bash
# Session 34, device call 6: one graph for a range of positions. Attention is launched with the
# splits of its capture's n_ctx (a lower bound) and issues its first tiles below it before the
# position's load is waited for; a graph serves positions up to attn_decode_ctx_limit.
# 1. run_h200.sh: attn_gpu_test (device positions from the exact n_ctx and from the smallest lower
#    bound, bit-identical to plain, plain and PDL), sanitizers, attention bench 4k-32k.
# 2. run_ops_h200.sh: ops_gpu_test and its sanitizers (the RoPE + row-store position load moved).
# 3. forward_gpu_device check (ranges) and with ALAP_GPU_ONE_GRAPH=0.
# 4. End to end A/B as call 3 (baked = a capture a position, one = a graph a range), three pairs.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 280 bash tests/kernels/gpu/run_h200.sh --ctx 4096,16384,32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$? $(at)"
grep -E "PASS|FAIL|failure|memcheck|racecheck|differs|not finite|out of range" "$o/attn.txt" | head -12
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=100 timeout 170 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? $(at)"
grep -E "PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -6
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
new=.dev/s34/new
export ALAP_GPU_LIBRARY=$PWD/$new/libalap_gpu.so
timeout 90 $new/forward_gpu_device check > "$o/check.txt" 2>&1
echo "check (one graph a range) rc=$? $(tail -1 "$o/check.txt") $(grep -c ' ok$' "$o/check.txt") ok $(at)"
grep -v " ok$" "$o/check.txt" | head -5
ALAP_GPU_ONE_GRAPH=0 timeout 90 $new/forward_gpu_device check > "$o/check_baked.txt" 2>&1
echo "check (a graph a position) rc=$? $(tail -1 "$o/check_baked.txt") $(at)"
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen3-0.6b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $new/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX MODE [nofill]
  echo "[$1]" >> $b
  env ALAP_BENCH_SAMPLE=1 $2 timeout 60 $new/forward_gpu_device bench "$m/$3.gguf" "$4" "$5" -1 ${6:-} 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2 3; do run baked ALAP_GPU_ONE_GRAPH=0 "$@"; run one ALAP_GPU_ONE_GRAPH=1 "$@"; done; }
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
  for mode in k8 f16; do ab $model 4096 $mode; ab $model 32768 $mode nofill; done
done
ab qwen3-0.6b-q4_k 4096 k8; ab qwen3-0.6b-q4_k 32768 k8 nofill; ab qwen3-0.6b-q4_k 4096 f16
ab llama3-8b-q4_k 4096 k8; ab llama3-8b-q4_k 32768 k8 nofill; ab llama3-8b-q4_k 4096 f16
echo "bench $(at)"
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
grep -c "one graph for a range of positions" $b
echo "done $(at)"
