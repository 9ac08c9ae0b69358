#!/bin/bash
# IQ4_NL / IQ4_XS on the device (not committed): from the repository root, bash .dev-gpu-run.sh
# Builds the GPU library's sources, the CPU oracle and ops_gpu_test as run_ops_h200.sh does (nvcc
# sm_90, g++), plus matmul.hip and ops_elementwise.hip with -DALAP_GPU_PLAIN_PERM (the plain byte
# permute / table lookup that HIP uses, here checked on CUDA), then:
#   1. ops_gpu_test with ALAP_TEST_TYPES=IQ4_NL,IQ4_XS (products and get_rows of the two types only,
#      plus the non-product tests), default build and plain-permute build;
#   2. compute-sanitizer memcheck and racecheck on --small, IQ4 types only;
#   3. the whole ops_gpu_test (every type: nothing else broke);
#   4. --bench-decode for IQ4_NL, IQ4_XS and Q4_0, Q4_K beside them (% of copy bandwidth).
# ALAP_DEV_SKIP_SAN=1 skips 2, ALAP_DEV_SKIP_FULL=1 skips 3, ALAP_DEV_SKIP_BENCH=1 skips 4. Logs in $OUT (or ./dev-gpu-out).
set -u -o pipefail
out=${OUT:-dev-gpu-out}
b=/tmp/alap-iq4
mkdir -p "$out" $b
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee "$out/machine.txt"
flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
gpu_srcs="attn_k8 attn_k8_prefill kv_k8_store ops_device matmul ops_elementwise attn_f16_prefill logits_top"
for src in $gpu_srcs; do
  $nvcc $flags -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 &
done
for src in matmul ops_elementwise; do
  $nvcc $flags -DALAP_GPU_PLAIN_PERM -x cu -c kernels/gpu/$src.hip -o $b/${src}_plain.o > $b/${src}_plain.log 2>&1 &
done
$nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/ops_gpu_test.cpp -o $b/ops_gpu_test.o > $b/ops_gpu_test.log 2>&1 &
cxx="g++ -std=c++20 -O2 -ffp-contract=off -I. -Ikernels/include -Ikernels/cpu"
cpu_objs=""
for src in $(cd kernels/cpu && ls *.cpp */*.cpp | sed 's/\.cpp$//'); do
  case $src in
    avx2/*) isa="-mavx2 -mfma -mf16c" ;;
    avx_vnni/*) isa="-mavx2 -mfma -mf16c -mavxvnni" ;;
    avx512_vnni/*) isa="-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni" ;;
    *) isa="" ;;
  esac
  o=$b/cpu_$(echo $src | tr / _).o
  $cxx $isa -c kernels/cpu/$src.cpp -o $o > $o.log 2>&1 &
  cpu_objs="$cpu_objs $o"
done
wait
cat $b/*.log > "$out/build.log"
gpu_objs="" plain_objs=""
for src in $gpu_srcs; do
  gpu_objs="$gpu_objs $b/$src.o"
  case $src in matmul|ops_elementwise) plain_objs="$plain_objs $b/${src}_plain.o" ;; *) plain_objs="$plain_objs $b/$src.o" ;; esac
done
$nvcc -arch=sm_90 $b/ops_gpu_test.o $gpu_objs $cpu_objs -lpthread -o $b/ops_gpu_test >> "$out/build.log" 2>&1 &&
  $nvcc -arch=sm_90 $b/ops_gpu_test.o $plain_objs $cpu_objs -lpthread -o $b/ops_gpu_test_plain >> "$out/build.log" 2>&1 ||
  { echo "BUILD FAILED"; grep -E "error|undefined" "$out/build.log" | head -30; exit 1; }
echo "build took $(( $(date +%s) - start )) s"
grep -E "warning|error" "$out/build.log" | head
# Registers / spills of the IQ4 product kernels (type ids 20, 23).
grep -A2 -E "Compiling entry function .*(matvec|matmul).*ILj(20|23)E" $b/matmul.log | grep -E "registers|spill" |
  awk '/spill/ {s = $5 + $9} /registers/ {print "IQ4 kernel regs", $5, "spill bytes", s}' | sort | uniq -c | tee -a "$out/build.log"

export ALAP_TEST_TYPES=IQ4_NL,IQ4_XS
for v in "" _plain; do
  echo "== ops_gpu_test$v, ALAP_TEST_TYPES=$ALAP_TEST_TYPES (at $(( $(date +%s) - start )) s)"
  $b/ops_gpu_test$v > "$out/test_iq4$v.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|PASS|matmul: max|get_rows: max" "$out/test_iq4$v.log" | head -30
done
[ -n "${ALAP_DEV_SKIP_SAN:-}" ] || echo "== compute-sanitizer --small, IQ4 only (at $(( $(date +%s) - start )) s)"
for tool in $([ -n "${ALAP_DEV_SKIP_SAN:-}" ] || echo memcheck racecheck); do
  timeout 300 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $b/ops_gpu_test --small \
    > $b/san.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' $b/san.log | head -5 | tr '\n' ' ')" |
    tee -a "$out/sanitizers.txt"
  grep -m5 -E "Invalid|Race|Error" $b/san.log >> "$out/sanitizers.txt"
done
unset ALAP_TEST_TYPES

if [ -z "${ALAP_DEV_SKIP_FULL:-}" ]; then
  echo "== ops_gpu_test, every type (at $(( $(date +%s) - start )) s)"
  $b/ops_gpu_test > "$out/test_all.log" 2>&1; echo "rc=$?"
  grep -E "FAIL|PASS|max error|max abs" "$out/test_all.log" | head -40
fi
if [ -z "${ALAP_DEV_SKIP_BENCH:-}" ]; then
  echo "== --bench-decode IQ4_NL, IQ4_XS, Q4_0, Q4_K (at $(( $(date +%s) - start )) s)"
  ALAP_BENCH_TYPES=IQ4_NL,IQ4_XS,Q4_0,Q4_K timeout 200 $b/ops_gpu_test --bench-decode 2>&1 | tee "$out/bench_decode.log"
fi
echo "done at $(( $(date +%s) - start )) s"
