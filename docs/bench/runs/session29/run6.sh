#!/bin/bash
# Session 29, device call 6: the scalar prefill attention kernel (attn_k8_prefill.hip: what HIP runs
# at every head_dim, CUDA at head_dim other than 64/128) with its tiles staged in registers a round
# ahead and shared-memory-only barriers, against HEAD's (.dev/s29/head/kernels/gpu/attn_k8_prefill.hip).
# attn_gpu_test on this tree with the default dispatch and with ALAP_GPU_PREFILL_MMA=0 (every prefill
# case on the scalar kernels), compute-sanitizer memcheck + racecheck of the latter on --small, then
# attn_gpu_bench --prefill-only (scalar kernels beside the matrix-unit ones) for head and new, twice.
set -u -o pipefail
o=${OUT:-/tmp/out}; b=/tmp/s29p; mkdir -p "$o" $b
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
others="attn_k8 attn_f16_prefill kv_k8_store ops_device matmul ops_elementwise logits_top"
for src in $others attn_k8_prefill; do $nvcc $flags -x cu -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 & done
H=.dev/s29/head
$nvcc -I$H $flags -x cu -c $H/kernels/gpu/attn_k8_prefill.hip -o $b/attn_k8_prefill_head.o > $b/head.log 2>&1 &
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $b/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $b/cpu_features.o &&
  ld -r $b/fp16_a.o $b/cpu_features.o -o $b/fp16.o &
for t in attn_gpu_test attn_gpu_bench; do $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $b/$t.o > $b/$t.log 2>&1 & done
wait
cat $b/*.log > "$o/build.log"
objs=""; for s in $others; do objs="$objs $b/$s.o"; done
for v in new head; do
  pf=$b/attn_k8_prefill.o; [ $v = head ] && pf=$b/attn_k8_prefill_head.o
  for t in attn_gpu_test attn_gpu_bench; do
    $nvcc -arch=sm_90 $b/$t.o $pf $objs $b/fp16.o -o $b/${t}_$v >> "$o/build.log" 2>&1 || { echo "BUILD FAILED $v"; grep error "$o/build.log" | head; exit 1; }
  done
done
echo "build took $(el) s"
$b/attn_gpu_test_new > "$o/test_new.log" 2>&1; echo "test new rc=$? $(tail -1 "$o/test_new.log")"
ALAP_GPU_PREFILL_MMA=0 $b/attn_gpu_test_new > "$o/test_new_scalar.log" 2>&1; echo "test new, scalar prefill rc=$? $(tail -1 "$o/test_new_scalar.log")"
ALAP_GPU_PREFILL_MMA=0 $b/attn_gpu_test_head > "$o/test_head_scalar.log" 2>&1; echo "test head, scalar prefill rc=$? $(tail -1 "$o/test_head_scalar.log")"
for tool in memcheck racecheck; do
  ALAP_GPU_PREFILL_MMA=0 timeout 150 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $b/attn_gpu_test_new --small > $b/san.log 2>&1
  echo "new, scalar prefill $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $b/san.log | tr '\n' ' ')"
done | tee "$o/sanitizers.txt"
for round in ${ALAP_ROUNDS:-1 2}; do
  for v in head new; do
    echo "== round $round $v (at $(el) s)"
    $b/attn_gpu_bench_$v --prefill-only 2>&1 | grep -vE "^device"
  done
done | tee "$o/bench_prefill.log"
echo "done at $(el) s"
