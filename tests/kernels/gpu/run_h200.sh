#!/bin/bash
# One device-machine session on the lent H200 (docs/bench/gpu.md): builds the GPU library's sources,
# attn_gpu_test and attn_gpu_bench with a hand-written nvcc/g++ command line (no cmake, no gtest),
# runs the correctness test, compute-sanitizer memcheck/racecheck on small shapes, and the benchmark.
# Logs go to $OUT (or ./h200-out). Usage from the repo root: bash tests/kernels/gpu/run_h200.sh [bench args]
# Environment: ALAP_VARIANT="-Dflags;-Dflags..." builds, tests and benches each variant
# (ALAP_VARIANT_CTX picks its contexts; ALAP_SAN_VARIANTS=1 runs the sanitizers on them too);
# ALAP_NCU="k8 k8v8" profiles one launch of each at 32k (ALAP_NCU_CTX="1024 32768": at those contexts);
# ALAP_SKIP_SAN=1 skips the sanitizers;
# ALAP_SAN_TIMEOUT / ALAP_NCU_TIMEOUT bound each tool run (seconds); ALAP_VARIANT_NOTEST=1 benches the
# variants without running their correctness test; ALAP_VARIANT_ARGS adds arguments to the variants'
# bench (e.g. ALAP_VARIANT="-DALAP_ATTN_DIAG=4" ALAP_VARIANT_NOTEST=1 ALAP_VARIANT_ARGS=--stamps for the
# per-block phase stamps; DIAG 1-3 time pieces by difference and give wrong results).
# The bench prints, per mode and context, graph / direct-launch / graph-with-PDL times, the
# decode-step pair (K row store + attention, with and without PDL) and same-size device copies
# (--no-copy skips them).
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
# Every GPU source the tests link (as run_ops_h200.sh; attn_f16_prefill since session 8).
gpu_srcs="attn_k8_prefill attn_f16_prefill kv_k8_store ops_device matmul matmul_blas ops_elementwise logits_top"
for src in attn_k8 $gpu_srcs; do
  $nvcc $flags -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $b/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $b/cpu_features.o &&
  ld -r $b/fp16_a.o $b/cpu_features.o -o $b/fp16.o &
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
others=""
for src in $gpu_srcs; do others="$others $b/$src.o"; done
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc -arch=sm_90 $b/$t.o $b/attn_k8.o $others $b/fp16.o -o $b/$t >> "$out/build.log" 2>&1 ||
    { echo "BUILD FAILED"; tail -50 "$out/build.log"; exit 1; }
done
echo "build took $(( $(date +%s) - start )) s"
grep -E "error" "$out/build.log" | head
# Instruction mix of the Llama-3-8B instantiations (head_dim 128, group bucket 4) of the mma kernels.
cuobjdump --dump-sass $b/attn_k8.o > $b/sass.txt 2>/dev/null &&
  for m in f16 k8 k8v8; do
    k=attn_${m}_decode_mma_kernelILi128ELi4E
    awk -v k="$k" '$0 ~ "Function : .*" k {on=1} on && /Function : / && $0 !~ k {on=0} on' $b/sass.txt > $b/sass_$m.txt
    cat $b/sass_$m.txt >> "$out/sass_mma.txt"
    echo "SASS $k: $(grep -c '^ */\*[0-9a-f]*\*/' $b/sass_$m.txt) instructions; $(cat $b/sass_$m.txt |
      grep -oE "(LDGSTS|LDSM|IMMA|HMMA|SHFL|MUFU|STL|LDL|BAR|LDS|LDG)[.A-Z0-9]*" | sort | uniq -c | tr -s ' \n' ' ')"
  done | tee -a "$out/build.log"
# Largest error of each kernel against its same-precision reference, from an attn_gpu_test log.
max_err() {
  awk 'function mx(a, b) { return (b + 0 > a + 0) ? b + 0 : a + 0 }
    /\(vs exact/ { for (i = 1; i <= NF; i++) { if ($i == "k8" && $(i + 2) == "(vs") a = mx(a, $(i + 1));
      if ($i == "f16") b = mx(b, $(i + 1)); if ($i == "k8v8") c = mx(c, $(i + 1)) } next }
    /\(of its bound/ { for (i = 2; i <= NF; i++) if ($i == "(of") e = mx(e, $(i - 1)); next }
    NF >= 2 && $NF ~ /e-/ { e = mx(e, $NF) }
    END { printf "max error vs reference: decode k8 %.2e, f16 %.2e, k8v8 %.2e; prefill %.2e\n", a, b, c, e }' "$1"
}
# compute-sanitizer memcheck and racecheck of one test binary on small shapes; summary lines only.
sanitize() {
  for tool in memcheck racecheck; do
    timeout ${ALAP_SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 "$1" --small > $b/san.log 2>&1
    echo "$2 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $b/san.log | tr '\n' ' ')" | tee -a "$out/sanitizers.txt"
  done
}

echo "== attn_gpu_test"
$b/attn_gpu_test > "$out/test.log" 2>&1; echo "attn_gpu_test rc=$?"
grep -E "FAIL|PASS|device" "$out/test.log" | head -20
max_err "$out/test.log"

for i in "${!variants[@]}"; do
  v=$b/attn_k8_var$i.o
  $nvcc -arch=sm_90 $b/attn_gpu_bench.o $v $others $b/fp16.o -o $b/bench_var$i &&
  $nvcc -arch=sm_90 $b/attn_gpu_test.o $v $others $b/fp16.o -o $b/test_var$i &&
  { echo "== variant ${variants[$i]}"
    if [ -z "${ALAP_VARIANT_NOTEST:-}" ]; then $b/test_var$i > $b/test_var.log 2>&1; tail -1 $b/test_var.log; max_err $b/test_var.log; fi
    $b/bench_var$i --ctx ${ALAP_VARIANT_CTX:-4096,32768,131072} --no-prefill --reps 30 ${ALAP_VARIANT_ARGS:-} |
      grep -vE "^(device|copy|geometry|mode|us/step|store)"; } 2>&1 | tee -a "$out/bench_variants.log"
done

echo "== attn_gpu_bench $* (at $(( $(date +%s) - start )) s)"
$b/attn_gpu_bench "$@" 2>&1 | tee "$out/bench.log"

echo "== compute-sanitizer (at $(( $(date +%s) - start )) s)"
[ -n "${ALAP_SKIP_SAN:-}" ] || sanitize $b/attn_gpu_test default
if [ -n "${ALAP_SAN_VARIANTS:-}" ]; then
  for i in "${!variants[@]}"; do [ -x $b/test_var$i ] && sanitize $b/test_var$i "${variants[$i]}"; done
fi

if [ -n "${ALAP_NCU:-}" ]; then
  echo "== ncu ($ALAP_NCU)"
  for c in ${ALAP_NCU_CTX:-32768}; do for m in $ALAP_NCU; do
    echo "ncu: $m at context $c" >> "$out/ncu.txt"
    timeout ${ALAP_NCU_TIMEOUT:-200} ncu --clock-control none -k regex:attn_${m}_decode --launch-skip 12 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
      $b/attn_gpu_bench --ctx $c --reps 2 --mode $m --no-prefill >> "$out/ncu.txt" 2>&1
  done; done
  grep -E "ncu: |attn_|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issued Ipc|No Eligible|Warp Cycles Per Issued|Block Limit|Executed Instructions  " "$out/ncu.txt" | grep -v "==PROF==" | head -60
fi

