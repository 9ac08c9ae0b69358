#!/bin/bash
# Session 47, device call 2, on call 1's warm machine (its objects still in /tmp/s47c1): call 1's
# attn_gpu_test did not link (nvcc takes no object named .x), so the test is built here as an .o per
# variant and linked with that variant's objects, and both run at once. As run (one line):
w=/tmp/s47c1; nvcc=/usr/local/cuda/bin/nvcc; flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"; ls $w/all | head -3; for v in all v8s; do f=""; [ $v = v8s ] && f=-DALAP_PREFILL_V8_SCALED=1; $nvcc $flags $f -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_test.cpp -o $w/$v/test_main.o & done; wait; echo "compiled $SECONDS"; for v in all v8s; do $nvcc -arch=sm_90 $w/$v/*.o $w/common/*.o $w/fp16.o -o $w/$v/attn_gpu_test2 && ($w/$v/attn_gpu_test2 > $OUT/$v.log 2>&1; echo "$v rc=$? $(tail -1 $OUT/$v.log)") & done; wait; for v in all v8s; do grep "of its bound" $OUT/$v.log | awk -v v=$v '{e=$(NF-4)+0; r=$NF+0; if(e>me)me=e; if(r>mr)mr=r} END{printf "%s prefill max err %.2e, largest err/bound %.2f\n", v, me, mr}'; grep "d_v=516\|FAIL" $OUT/$v.log | head -6; done; echo "done $SECONDS"
# (At that tree V8_SCALED defaulted to 0, so "all" was the
# old form and "v8s" the form that is now the default.)
