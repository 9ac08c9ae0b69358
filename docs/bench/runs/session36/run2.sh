#!/bin/bash
# Session 36, device call 2: as call 1 (run1.sh), with the count lighter: only the first warp (the
# rows' writers) stays for it, a release atomic by its lane 0 after a warp barrier instead of a
# block barrier and every thread's __threadfence.
# 1. ops_gpu_test (all; the new cases against gpu_matmul + gpu_swiglu_q8 byte for byte), then
#    compute-sanitizer memcheck and racecheck on --small.
# 2. forward_gpu_device check, fused (default) and ALAP_GPU_SWIGLU_IN_PRODUCT=0.
# 3. End to end pairs in one library: sep = ALAP_GPU_SWIGLU_IN_PRODUCT=0, fused = default.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/new
export LD_LIBRARY_PATH=$PWD/$d:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$PWD/$d/libalap_gpu.so
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$o/machine.txt" 2>&1
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen2.5-1.5b q4_k" "llama3-8b q4_k" "qwen2.5-0.5b q8_0"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
timeout 120 $d/ops_gpu_test > "$o/ops.txt" 2>&1
echo "ops rc=$? $(tail -1 "$o/ops.txt") $(at)"
grep -E "FAIL|FATAL" "$o/ops.txt" | head -8
for tool in memcheck racecheck; do
  timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > "$o/san_$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$o/san_$tool.txt" | tail -1) | $(grep -E "^(PASS|FAIL)" "$o/san_$tool.txt" | tail -1) $(at)"
done
for f in 1 0; do
  ALAP_GPU_SWIGLU_IN_PRODUCT=$f timeout 90 $d/forward_gpu_device check > "$o/check_$f.txt" 2>&1
  echo "check fused=$f rc=$? $(tail -1 "$o/check_$f.txt") $(at)"
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX MODE
  echo "[$1]" >> $b
  env ALAP_BENCH_SAMPLE=1 $2 timeout 60 $d/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 nofill 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2; do run sep ALAP_GPU_SWIGLU_IN_PRODUCT=0 "$@"; run fused ALAP_GPU_SWIGLU_IN_PRODUCT=1 "$@"; done; }
ab qwen2.5-0.5b-q4_k 4096 k8; ab llama3.2-1b-q4_k 4096 k8; ab llama3-8b-q4_k 4096 k8
ab qwen2.5-1.5b-q4_k 4096 k8; ab qwen2.5-0.5b-q8_0 4096 k8
ab qwen2.5-0.5b-q4_k 1024 f16; ab qwen2.5-0.5b-q4_k 32768 k8; ab llama3-8b-q4_k 32768 k8
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
