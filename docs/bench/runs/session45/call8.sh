#!/bin/bash
# Session 45, device call 8: the tree as it stands at the end of the session (the prefill attention's
# softmax changes and two head_dim-128 blocks a multiprocessor; gpu_blas_status, ABI 4): attn_gpu_test,
# ops_gpu_test through run_ops_h200.sh (with cuBLAS expected, the refused stand-ins, the BLAS status lines),
# a Llama-3-8B bench line with its prefill BLAS status (and with ALAP_GPU_PREFILL=kernels,
# and with no BLAS to be found), compute-sanitizer memcheck and racecheck of attn_gpu_test --small.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s45c8; mkdir -p $o $w/lib
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
[ -f $m/llama3-8b-q4_k.gguf ] || $d/make_random_model llama3-8b q4_k $m/llama3-8b-q4_k.gguf > /dev/null 2>&1 &
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  $nvcc $flags -x cu -c $src -o $w/lib/$n.o > $w/lib/$n.log 2>&1 &
done
for t in attn_gpu_test; do
  $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $w/$t.o > $w/$t.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log ) &
wait
cat $w/lib/*.log $w/*.log | grep -E "error|warning" | head
$nvcc -shared -arch=sm_90 $w/lib/*.o -o $w/lib/libalap_gpu.so -lcudart > $w/link.log 2>&1
$nvcc -arch=sm_90 $w/attn_gpu_test.o $w/lib/*.o $w/fp16.o -o $w/attn_gpu_test >> $w/link.log 2>&1
echo "built $(at)"; head -5 $w/link.log
grep -E "rc=|FAIL|PASS|attn_f16_prefill" $w/ops_run.log | head -12
grep -h "blas status\|blas refused\|FAIL" $w/ops/*.log 2>/dev/null | head -8
$w/attn_gpu_test > $w/attn_test.log 2>&1; echo "attn_gpu_test rc=$? $(tail -1 $w/attn_test.log)"
grep FAIL $w/attn_test.log | head -5
grep "of its bound" $w/attn_test.log | awk '{e = $(NF-4) + 0; r = $NF + 0; if (e > me) me = e; if (r > mr) mr = r} END {printf "prefill: max error %.2e, largest error / bound %.2f\n", me, mr}'
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$w/lib/libalap_gpu.so
for pre in auto kernels; do
  echo "bench prefill $pre: $(ALAP_GPU_PREFILL=$pre ALAP_BENCH_CHUNK=2048 timeout 60 $d/forward_gpu_device bench $m/llama3-8b-q4_k.gguf 4096 k8 -1 2>&1 | grep -E '^bench|prefill blas' | sed -E 's/, decode.*//' | tr '\n' ' ')"
done
echo "bench no BLAS found: $(ALAP_GPU_BLAS_LIBRARY=/nonexistent/no-blas.so ALAP_BENCH_CHUNK=2048 timeout 60 $d/forward_gpu_device bench $m/llama3-8b-q4_k.gguf 4096 k8 -1 2>&1 | grep -E '^bench|prefill blas' | sed -E 's/, decode.*//' | tr '\n' ' ')"
for tool in memcheck racecheck; do
  [ $(( $(date +%s) - start )) -gt 230 ] && { echo "sanitizers cut before $tool $(at)"; break; }
  timeout 100 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $w/attn_gpu_test --small > $w/san_$tool.log 2>&1
  echo "attn_gpu_test --small $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' $w/san_$tool.log | head -3 | tr '\n' ' ') $(at)"
done
tar czf $o/call8.tgz -C $w --exclude='*.o' --exclude='*.so' --exclude=attn_gpu_test .
echo "done $(at)"
