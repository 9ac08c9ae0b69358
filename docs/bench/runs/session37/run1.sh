#!/bin/bash
# Session 37, device call 1: decode products with more of a row's pieces in flight a thread.
# Libraries of the same tree (kernels/gpu/matmul.hip's ALAP_MV_XR_AHEAD): base = 0 (HEAD's loop),
# ah1 = the next piece's bytes loaded into registers before this piece is dotted, ah2 = the next
# piece's line asked of L2 first, ah1r2 = ah1 with 2 rows a block for every type.
# 1. ops_gpu_test (all) with each variant; 2. the decode products alone (--bench-decode), two
# rounds; 3. whole decode steps (forward_gpu_device bench, random models), two rounds;
# 4. forward_gpu_device check with each variant; 5. ncu of the 4096 × 14336 Q4_K product.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s37/carry
vars="base ah1 ah2 ah1r2"
for v in $vars; do gunzip -kf $d/$v/libalap_gpu.so.gz; done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$o/machine.txt" 2>&1
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "llama3.2-1b q8_0"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
with() { local v=$1; shift; env LD_LIBRARY_PATH=$PWD/$d/$v:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$PWD/$d/$v/libalap_gpu.so "$@"; }
for v in $vars; do
  with $v timeout 120 $d/ops_gpu_test > "$o/ops_$v.txt" 2>&1
  echo "ops $v rc=$? $(tail -1 "$o/ops_$v.txt") $(at)"
  grep -E "FAIL|FATAL" "$o/ops_$v.txt" | head -5
done
types="Q4_K,Q6_K,Q5_0,Q8_0,Q4_0,Q5_K,Q3_K,IQ4_XS"
for r in 1 2; do
  for v in $vars; do
    with $v env ALAP_BENCH_TYPES=$types timeout 120 $d/ops_gpu_test --bench-decode > "$o/dec_${v}_$r.txt" 2>&1
    echo "bench-decode $v round $r rc=$? $(at)"
  done
done
wait
echo "models written $(at)"; ls -la $m
b=$o/ab.log
: > $b
run() {  # LABEL MODEL CTX MODE
  echo "[$1]" >> $b
  with $1 env ALAP_BENCH_SAMPLE=1 timeout 90 $d/forward_gpu_device bench "$m/$2.gguf" $3 $4 -1 nofill 2>&1 | grep -v '^device:' >> $b
}
for r in 1 2; do
  for spec in "llama3-8b-q4_k 4096 k8" "llama3.2-1b-q4_k 4096 k8" "qwen2.5-0.5b-q4_k 4096 k8" "llama3.2-1b-q8_0 4096 k8" "llama3-8b-q4_k 32768 k8"; do
    for v in $vars; do run $v $spec; done
  done
  echo "bench round $r $(at)"
done
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
for v in $vars; do
  with $v timeout 120 $d/forward_gpu_device check > "$o/check_$v.txt" 2>&1
  echo "check $v rc=$? $(tail -1 "$o/check_$v.txt") $(at)"
done
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for v in base ah1; do
  with $v env ALAP_BENCH_TYPES=Q4_K ALAP_BENCH_ROWS=4096 timeout 120 $ncu --clock-control none --kernel-name regex:matvec_xr \
    --launch-skip 30 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats $d/ops_gpu_test --bench-decode > "$o/ncu_$v.txt" 2>&1
  echo "ncu $v rc=$? $(at)"
  grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" "$o/ncu_$v.txt" | head -12
done
echo "done $(at)"
