#!/bin/bash
# Session 29, device call 3: the scalar decode attention body (the one HIP / RDNA3 runs; CUDA runs it
# for head_dim other than 64 and 128) before and after this session's change, on the lent H200.
# Builds (nvcc sm_90) attn_gpu_test and attn_gpu_bench against each variant of attn_k8.hip:
#   def        this tree, shipped CUDA build (matrix-unit body for head_dim 64/128)
#   mma0       this tree, -DALAP_ATTN_MMA=0: the scalar body with cp.async (3 stages)
#   mma0_head  HEAD's attention source (.dev/s29/head, with this tree's gpu_port.h), -DALAP_ATTN_MMA=0
#   hip        this tree, -DALAP_ATTN_MMA=0 -DALAP_GPU_PLAIN_COPY: what HIP runs (register staging)
#   hip_head   HEAD's source, the same flags: what HIP ran before (copies that wait for their loads)
#   hip4 / hip_head4: the same two with -DALAP_ATTN_MIN_BLOCKS=4 (register room on CUDA: with 5
#              resident blocks ptxas caps a thread at 96 registers and the staged tile spills)
# then attn_gpu_test for each, attn_gpu_bench (4k and 32k, decode only) for each in two rounds in
# opposite orders, and compute-sanitizer memcheck + racecheck on def and hip (ALAP_SAN=1).
# ALAP_NAMES picks variants; ALAP_TESTS_ONLY=1 skips the benchmark (call 4: the tests' logs, which
# call 3 printed only to its console and lost).
set -u -o pipefail
o=${OUT:-/tmp/out}; b=/tmp/s29; mkdir -p "$o" $b
start=$(date +%s); el() { echo $(( $(date +%s) - start )); }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
others="attn_k8_prefill attn_f16_prefill kv_k8_store ops_device matmul ops_elementwise logits_top"
for src in $others; do $nvcc $flags -x cu -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 & done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $b/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $b/cpu_features.o &&
  ld -r $b/fp16_a.o $b/cpu_features.o -o $b/fp16.o &
for t in attn_gpu_test attn_gpu_bench; do $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $b/$t.o > $b/$t.log 2>&1 & done
H=.dev/s29/head
declare -A var=(
  [def]="kernels/gpu/attn_k8.hip|"
  [mma0]="kernels/gpu/attn_k8.hip|-DALAP_ATTN_MMA=0"
  [mma0_head]="$H/kernels/gpu/attn_k8.hip|-I$H -DALAP_ATTN_MMA=0"
  [hip]="kernels/gpu/attn_k8.hip|-DALAP_ATTN_MMA=0 -DALAP_GPU_PLAIN_COPY"
  [hip_head]="$H/kernels/gpu/attn_k8.hip|-I$H -DALAP_ATTN_MMA=0 -DALAP_GPU_PLAIN_COPY"
  [hip4]="kernels/gpu/attn_k8.hip|-DALAP_ATTN_MMA=0 -DALAP_GPU_PLAIN_COPY -DALAP_ATTN_MIN_BLOCKS=4"
  [hip_head4]="$H/kernels/gpu/attn_k8.hip|-I$H -DALAP_ATTN_MMA=0 -DALAP_GPU_PLAIN_COPY -DALAP_ATTN_MIN_BLOCKS=4"
)
names=${ALAP_NAMES:-"def mma0 mma0_head hip hip_head hip4 hip_head4"}
for n in $names; do
  IFS='|' read -r src f <<< "${var[$n]}"
  $nvcc $f $flags -x cu -Xptxas -v -c $src -o $b/attn_$n.o > $b/attn_$n.log 2>&1 &
done
wait
cat $b/*.log > "$o/build.log"
objs=""; for s in $others; do objs="$objs $b/$s.o"; done
for n in $names; do
  for t in attn_gpu_test attn_gpu_bench; do
    $nvcc -arch=sm_90 $b/$t.o $b/attn_$n.o $objs $b/fp16.o -o $b/${t}_$n >> "$o/build.log" 2>&1 || { echo "BUILD FAILED $n"; grep -E "error" "$o/build.log" | head; exit 1; }
  done
  echo "$n: $(grep -A3 "Compiling entry function '_ZN4alap3gpu23attn_k8v8_decode_kernelILi128ELi4E" $b/attn_$n.log | grep -oE "[0-9]+ bytes spill stores|Used [0-9]+ registers" | tr '\n' ' ')"
done
echo "build took $(el) s"
for n in $names; do
  $b/attn_gpu_test_$n > "$o/test_$n.log" 2>&1; echo "test $n rc=$? $(tail -1 "$o/test_$n.log")" | tee -a "$o/tests.txt"
done
[ -n "${ALAP_TESTS_ONLY:-}" ] || for round in 1 2; do
  order=$names; [ $round = 2 ] && order=$(echo $names | tr ' ' '\n' | tac | tr '\n' ' ')
  for n in $order; do
    echo "== round $round $n (at $(el) s)"
    $b/attn_gpu_bench_$n --ctx 4096,32768 --no-prefill --no-step --reps 30 2>&1 | grep -E "^(f16|k8|k8v8) |^ctx|^copy bandwidth"
  done
done 2>&1 | tee "$o/bench.log"
if [ -n "${ALAP_SAN:-}" ]; then
  for n in def hip; do for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $b/attn_gpu_test_$n --small > $b/san.log 2>&1
    echo "$n $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $b/san.log | tr '\n' ' ')"
  done; done | tee "$o/sanitizers.txt"
fi
echo "done at $(el) s"
