#!/bin/bash
# Session 35, device call 7: one block an SM while its split would stream at most 100 KB (head_dim-64
# kernels, occupancy 2), on top of the committed merge cap (13cd730).
# 1. run_h200.sh: attn_gpu_test (new cases: Llama-3.2-1B geometry at 3841 and 9001 rows), sanitizers.
# 2. forward_gpu_device check, graphs by range and a capture a position.
# 3. End to end pairs: old = 13cd730's library, new = this tree's.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 280 bash tests/kernels/gpu/run_h200.sh --ctx 4096,32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$? $(at)"
grep -E "PASS|FAIL|failure|memcheck|racecheck|differs|not finite|out of range" "$o/attn.txt" | head -12
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35
for og in 1 0; do
  ALAP_GPU_LIBRARY=$PWD/$d/new2/libalap_gpu.so ALAP_GPU_ONE_GRAPH=$og timeout 90 $d/new2/forward_gpu_device check > "$o/check_$og.txt" 2>&1
  echo "check one_graph=$og rc=$? $(tail -1 "$o/check_$og.txt") $(at)"
done
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "smollm2-1.7b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $d/new2/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL LIB MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_SAMPLE=1 ALAP_GPU_LIBRARY=$2 timeout 60 $d/new2/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 nofill 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2; do run old $PWD/$d/new/libalap_gpu.so "$@"; run new $PWD/$d/new2/libalap_gpu.so "$@"; done; }
for c in 1024 2048 4096 8192 16384 32768; do ab llama3.2-1b-q4_k $c k8; done
ab llama3.2-1b-q4_k 4096 f16; ab llama3.2-1b-q4_k 4096 k8v8
ab smollm2-1.7b-q4_k 1024 k8; ab smollm2-1.7b-q4_k 2048 k8
ab qwen2.5-0.5b-q4_k 1024 k8; ab qwen2.5-0.5b-q4_k 4096 k8; ab qwen2.5-0.5b-q4_k 16384 k8
ab llama3-8b-q4_k 4096 k8
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
