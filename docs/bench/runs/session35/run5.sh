#!/bin/bash
# Session 35, device call 5: the split rule (attn_k8.hip set_splits: no more than 32 splits with rows
# a KV head unless each split streams over 192 KB), the shipped tree.
# 1. run_h200.sh: attn_gpu_test (new cases: Qwen2.5-0.5B geometry at 16k, Qwen2.5-1.5B at 33k; every
#    case at a device position from a lower bound, bit for bit), sanitizers, attention bench 4k-32k.
# 2. forward_gpu_device check, graphs by range and a capture a position; the scalar body too.
# 3. End to end A/B: old = the library of 05dbe94 (session 34's), new = this tree's; the same program.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 280 bash tests/kernels/gpu/run_h200.sh --ctx 4096,16384,32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$? $(at)"
grep -E "PASS|FAIL|failure|memcheck|racecheck|differs|not finite|out of range" "$o/attn.txt" | head -12
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35
for lib in new newscalar; do
  for og in 1 0; do
    ALAP_GPU_LIBRARY=$PWD/$d/$lib/libalap_gpu.so ALAP_GPU_ONE_GRAPH=$og timeout 90 $d/new/forward_gpu_device check > "$o/check_${lib}_$og.txt" 2>&1
    echo "check $lib one_graph=$og rc=$? $(tail -1 "$o/check_${lib}_$og.txt") $(at)"
  done
done
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen2.5-1.5b q4_k" "smollm2-1.7b q4_k" "llama3-8b q4_k" "qwen3-0.6b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $d/new/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL LIB MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_SAMPLE=1 ALAP_GPU_LIBRARY=$2 timeout 60 $d/new/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 nofill 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2; do run old $PWD/.dev/s34/new/libalap_gpu.so "$@"; run new $PWD/$d/new/libalap_gpu.so "$@"; done; }
abs() { for i in 1 2; do run old-scalar $PWD/.dev/s34/scalar/libalap_gpu.so "$@"; run new-scalar $PWD/$d/newscalar/libalap_gpu.so "$@"; done; }
for c in 1024 4096 8192 16384 32768; do ab qwen2.5-0.5b-q4_k $c k8; done
ab qwen2.5-0.5b-q4_k 16384 f16; ab qwen2.5-0.5b-q4_k 16384 k8v8; ab qwen2.5-0.5b-q4_k 32768 f16
ab llama3.2-1b-q4_k 4096 k8; ab llama3.2-1b-q4_k 32768 k8
ab qwen2.5-1.5b-q4_k 4096 k8; ab qwen2.5-1.5b-q4_k 16384 k8; ab qwen2.5-1.5b-q4_k 32768 k8
ab smollm2-1.7b-q4_k 32768 k8; ab qwen3-0.6b-q4_k 32768 k8; ab llama3-8b-q4_k 4096 k8; ab llama3-8b-q4_k 32768 k8
abs qwen2.5-0.5b-q4_k 4096 k8; abs qwen2.5-0.5b-q4_k 16384 k8; abs qwen2.5-0.5b-q4_k 32768 k8
echo "bench $(at)"
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip()[1:-1]; continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+)', l)
    if m: key = m.groups(); continue
    m = re.search(r'a step: ([\d.]+) us a token in the loop, ([\d.]+) us as a graph.*steady: ([\d.]+) us', l)
    if m: d[key][lab].append(tuple(map(float, m.groups())))
for key, hows in d.items():
    print(*key, " | ".join(f"{h}: device {statistics.median(x[1] for x in v):.1f} us, steady {statistics.median(x[2] for x in v):.1f} us"
                         f" ({1e6 / statistics.median(x[2] for x in v):.0f} tok/s)" for h, v in hows.items()))
PY
echo "done $(at)"
