#!/bin/bash
# Session 29, device call 2: integrated check of main's GPU forward pass on the lent H200.
# 1. tests/kernels/gpu/run_ops_h200.sh: every ops.h kernel (products of every weight type, the
#    elementwise and prefill kernels, graphs) against the CPU oracle built from kernels/cpu, then
#    compute-sanitizer memcheck and racecheck on --small; the matmul source also built with
#    -DALAP_GPU_PLAIN_PERM (the byte permute / table lookup the HIP build uses), tested and memchecked.
# 2. tests/core/model/run_forward_h200.sh with forward_gpu_device and make_random_model built on the
#    development machine (carried in .dev/s29/bin; the GPU library built here): logits of the whole
#    GPU forward pass against the CPU engine (36 cases), also with the CPU's avx2 kernels, and
#    end-to-end tokens/s of random Qwen2.5-0.5B / Llama-3.2-1B Q4_K models at 4k and 32k, f16 and k8.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_VARIANT="-DALAP_GPU_PLAIN_PERM" ALAP_SAN_VARIANTS=1 ALAP_SAN_TIMEOUT=150 \
  bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$?"
grep -E "rc=|PASS|FAIL|build took|memcheck|racecheck" "$o/ops.txt" | head -30
OUT=$o/fwd ALAP_DEV_BIN=.dev/s29/bin ALAP_BENCH_QUICK=1 bash tests/core/model/run_forward_h200.sh 200 > "$o/fwd.txt" 2>&1
echo "forward rc=$?"
ALAP_CPU_VARIANT=avx2 LD_LIBRARY_PATH=/tmp/alap-fwd:${LD_LIBRARY_PATH:-} ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so \
  timeout 90 .dev/s29/bin/forward_gpu_device check > "$o/fwd/check_avx2.log" 2>&1
echo "check with avx2 CPU kernels rc=$? $(grep -cE 'FAIL' "$o/fwd/check_avx2.log") FAIL lines; $(tail -1 "$o/fwd/check_avx2.log")"
tail -25 "$o/fwd.txt"
echo "done at $(( $(date +%s) - start )) s"
