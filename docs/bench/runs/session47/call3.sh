#!/bin/bash
# Session 47, device call 3 (not run: too little device time was left to start a machine): the tree with
# k8v8's V staged as fp16(q·d_v), the only form since session 47, built with no switch, and its
# attn_gpu_test. For the next session's first call.
w=/tmp/s47c3; mkdir -p $w/t; nvcc=/usr/local/cuda/bin/nvcc; flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
for src in kernels/gpu/*.hip; do $nvcc $flags -x cu -c $src -o $w/$(basename $src .hip).o & done
$nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_test.cpp -o $w/t/attn_gpu_test.o &
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/t/fp16.o &
g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/t/cpu_features.o &
wait; echo "built $SECONDS s"
$nvcc -arch=sm_90 $w/t/*.o $w/*.o -o $w/attn_gpu_test || exit 1
$w/attn_gpu_test > $OUT/attn_test_default.log 2>&1; echo "attn_gpu_test rc=$? $(tail -1 $OUT/attn_test_default.log)"
grep "^prefill.*k8v8" $OUT/attn_test_default.log | grep -v "d_v=516" | awk '{print $NF}' | tr -d ')' | sort -g | tail -1 | sed 's/^/k8v8 prefill, largest error over its bound: /'
grep "d_v=516\|FAIL" $OUT/attn_test_default.log | head -6; echo "done $SECONDS s"
