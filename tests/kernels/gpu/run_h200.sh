#!/bin/bash
# One device-machine session on the lent H200 (docs/bench/gpu.md): builds the GPU library's sources,
# attn_gpu_test and attn_gpu_bench with a hand-written nvcc/g++ command line (no cmake, no gtest),
# runs the correctness test, compute-sanitizer memcheck/racecheck on small shapes, and the benchmark.
# Logs go to $OUT (or ./h200-out). Usage from the repo root: bash tests/kernels/gpu/run_h200.sh [bench args]
set -u -o pipefail
out=${OUT:-h200-out}
mkdir -p "$out" /tmp/alap
b=/tmp/alap
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  date -u +"date: %Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  $nvcc --version | tail -2
} 2>&1 | tee "$out/machine.txt"

flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
start=$(date +%s)
for src in attn_k8 attn_k8_prefill kv_k8_store; do
  $nvcc $flags -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -Ikernels/include -c kernels/cpu/fp16.cpp -o $b/fp16.o &
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $b/$t.o > $b/$t.log 2>&1 &
done
# Variant for comparison (ALAP_VARIANT="-DALAP_ATTN_TILE=32 -DALAP_ATTN_MIN_BLOCKS=4", say).
IFS=';' read -r -a variants <<< "${ALAP_VARIANT:-}"
for i in "${!variants[@]}"; do
  $nvcc $flags ${variants[$i]} -x cu -Xptxas -v -c kernels/gpu/attn_k8.hip -o $b/attn_k8_var$i.o > $b/attn_k8_var$i.log 2>&1 &
done
wait
cat $b/*.log > "$out/build.log"
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc -arch=sm_90 $b/$t.o $b/attn_k8.o $b/attn_k8_prefill.o $b/kv_k8_store.o $b/fp16.o -o $b/$t >> "$out/build.log" 2>&1 ||
    { echo "BUILD FAILED"; tail -50 "$out/build.log"; exit 1; }
done
echo "build took $(( $(date +%s) - start )) s"
grep -E "error" "$out/build.log" | head
cuobjdump --dump-sass $b/attn_k8.o > $b/sass.txt 2>/dev/null &&
  awk '/Function : .*attn_k8_decode_kernelILi128ELi4E/{on=1} on&&/Function : /&&!/attn_k8_decode_kernelILi128ELi4E/{on=0} on' $b/sass.txt |
  grep -oE "LDG[.A-Z0-9]*|IDP[.A-Z0-9]*|SHFL[.A-Z]*|STL[.A-Z0-9]*|LDL[.A-Z0-9]*" | sort | uniq -c > "$out/sass_k8_128_4.txt"
cat "$out/sass_k8_128_4.txt"

echo "== attn_gpu_test"
$b/attn_gpu_test > "$out/test.log" 2>&1; echo "attn_gpu_test rc=$?"
grep -E "FAIL|PASS|device" "$out/test.log" | head -20
awk '{for(i=1;i<=NF;i++) if($i ~ /^[0-9.]+e-[0-9]+$/ && $i+0 > m) m=$i+0} END {print "largest error printed:", m}' "$out/test.log"

echo "== compute-sanitizer"
for tool in memcheck racecheck; do
  timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $b/attn_gpu_test --small > "$out/sanitizer_$tool.log" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer_$tool.log" | tr '\n' ' ')"
done

if [ -n "${ALAP_NCU:-}" ]; then
  echo "== ncu ($ALAP_NCU)"
  for m in $ALAP_NCU; do
    timeout 200 ncu --clock-control none -k regex:attn_${m}_decode --launch-skip 12 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
      $b/attn_gpu_bench --ctx 32768 --reps 2 --mode $m --no-prefill >> "$out/ncu.txt" 2>&1
  done
  grep -E "attn_|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issued Ipc|No Eligible|Warp Cycles Per Issued|Block Limit|Executed Instructions  " "$out/ncu.txt" | grep -v "==PROF==" | head -60
fi

for i in "${!variants[@]}"; do
  v=$b/attn_k8_var$i.o
  $nvcc -arch=sm_90 $b/attn_gpu_bench.o $v $b/attn_k8_prefill.o $b/kv_k8_store.o $b/fp16.o -o $b/bench_var$i &&
  $nvcc -arch=sm_90 $b/attn_gpu_test.o $v $b/attn_k8_prefill.o $b/kv_k8_store.o $b/fp16.o -o $b/test_var$i &&
  { echo "== variant ${variants[$i]}"; $b/test_var$i | tail -1;
    $b/bench_var$i --ctx 4096,32768,131072 --no-prefill --reps 30 | tail -12; } 2>&1 | tee -a "$out/bench.log"
done

echo "== attn_gpu_bench $*"
$b/attn_gpu_bench "$@" 2>&1 | tee "$out/bench.log"
