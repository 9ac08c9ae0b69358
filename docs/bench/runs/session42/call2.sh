#!/bin/bash
# Session 42, device call 2: the BLAS prefill products (matmul_blas.hip) checked and timed, and the
# integrated check of the tree.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s42; mkdir -p $o $w
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
$nvcc --version | tail -1; ls /usr/local/cuda/lib64/ | grep -i cublas | head -4
mkdir -p $w/lib
d=.dev/s42/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  $nvcc -std=c++20 -O3 -arch=sm_90 -Xcompiler=-fPIC -I. -Ikernels/include -x cu -c $src -o $w/lib/$(basename $src .hip).o > $w/lib/$(basename $src .hip).log 2>&1 &
done
( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log ) &
wait
$nvcc -shared -arch=sm_90 $w/lib/*.o -o $w/lib/libalap_gpu.so -lcudart > $w/lib/link.log 2>&1
echo "lib + ops done $(at)"; cat $w/lib/link.log | head -5; grep -E "PASS|FAIL|rc=|matmul|memcheck" $w/ops_run.log | head -20
grep -E "FAIL" $w/ops/test.log | head -10
export LD_LIBRARY_PATH=$w/lib:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$w/lib/libalap_gpu.so
timeout 170 $d/forward_gpu_device check > $w/check.txt 2>&1 &
ALAP_GPU_PREFILL=blas timeout 170 $d/forward_gpu_device check > $w/check_blas.txt 2>&1 &
wait
echo "checks $(at): $(tail -1 $w/check.txt) | blas: $(tail -1 $w/check_blas.txt)"
grep -iE "fail|outside|error" $w/check_blas.txt | head -5
ALAP_BENCH_PREFILL=engine timeout 120 /tmp/alap-ops/ops_gpu_test --bench-prefill > $w/bench_prefill.txt 2>&1
echo "bench-prefill rc=$? $(at)"; grep -E "^\|" $w/bench_prefill.txt | awk -F'|' '{print $2,$3,$4,$5,$10,$11,$15,$16,$17}' | head -60
ls -la $m
for spec in "llama3-8b-q4_k 4096 512" "llama3-8b-q4_k 4096 2048" "llama3.2-1b-q4_k 4096 512" "qwen2.5-0.5b-q4_k 4096 512" "llama3.2-1b-q4_k 4096 2048" "qwen2.5-0.5b-q4_k 4096 2048" "llama3-8b-q4_k 32768 2048"; do
  set -- $spec
  for pf in kernels blas; do
    [ $(( $(date +%s) - start )) -gt 500 ] && { echo "e2e cut at $spec $pf $(at)"; break 2; }
    echo "== $1 ctx $2 chunk $3 prefill $pf" >> $w/e2e.txt
    ALAP_GPU_PREFILL=$pf ALAP_BENCH_CHUNK=$3 ALAP_BENCH_SAMPLE=1 timeout 40 $d/forward_gpu_device bench $m/$1.gguf $2 k8 -1 2>&1 | grep -v '^device:' >> $w/e2e.txt
  done
done
echo "e2e done $(at)"; grep -E "==|prefill" $w/e2e.txt | head -40
left=$(( 585 - ($(date +%s) - start) ))
if [ $left -gt 30 ]; then
  ALAP_TEST_TYPES=Q4_K,Q8_0,F16,BF16,IQ4_XS,Q2_K timeout $left compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 /tmp/alap-ops/ops_gpu_test --small > $w/memcheck.txt 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASS|FAIL|matmul blas' $w/memcheck.txt | head -4 | tr '\n' ' ') $(at)"
fi
tar czf $o/call2.tgz -C $w --exclude='*.o' .
