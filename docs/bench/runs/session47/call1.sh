#!/bin/bash
# Session 47, device call 1: session 46's call 1 (docs/bench/runs/session46/call1.sh, which says what
# it builds, checks and times) with attn_gpu_test built for each variant, so that v8s's test widens its
# k8v8 prefill bound for V's rounding to fp16 (tests/kernels/gpu/prefill_bound.h:
# prefill_v8_rounded_to_fp16), and its work folder /tmp/s47c1. Run as
#   VS="all v8s both" bash docs/bench/runs/session47/call1.sh
# (ROUNDS="1" for one round of the kernel bench instead of three). As run in session 47 (call 1) the
# test's object was named .x, which nvcc would not link; call2.sh ran the test. Fixed since: the object
# is test/attn_gpu_test.o, outside the folder whose objects make the library.
# Since the review of session 47 the tree has no ALAP_PREFILL_V8_SCALED switch (its form is the only
# one), so "all" and "v8s" build the same kernel there.
# (carry .dev/s43: forward_gpu_device, make_random_model, the eval model and its token ids).
set -eu
here=$(dirname "$0")
sed -e 's|w=/tmp/s46c1;|w=/tmp/s47c1;|' \
    -e 's|^\$nvcc \$flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_test.cpp -o \$w/attn_gpu_test.o \(.*\)|for v in $vs; do mkdir -p $w/$v/test; $nvcc $flags ${vf[$v]} -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_test.cpp -o $w/$v/test/attn_gpu_test.o > $w/$v/attn_gpu_test.log 2>\&1 \& done|' \
    -e 's|\$w/attn_gpu_test.o \$w/\$v/\*.o|$w/$v/test/attn_gpu_test.o $w/$v/*.o|' \
    -e 's|^for r in 1 2 3; do for v in \$vs; do$|for r in ${ROUNDS:-1 2 3}; do for v in $vs; do|' \
    "$here/../session46/call1.sh" > /tmp/session47_call1.sh
grep -q 'test/attn_gpu_test.o > ' /tmp/session47_call1.sh && grep -q '/tmp/s47c1' /tmp/session47_call1.sh || { echo "call1.sh: the edits of session 46's script did not apply"; exit 1; }
exec bash /tmp/session47_call1.sh
