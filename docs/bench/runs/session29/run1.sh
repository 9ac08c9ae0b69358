#!/bin/bash
# Session 29, device call 1: integrated check of main's GPU attention on the lent H200 (the last whole
# check was session 15's). tests/kernels/gpu/run_h200.sh builds the attention sources and
# attn_gpu_test / attn_gpu_bench with nvcc on the device and runs: the correctness test, the
# decode bench at 1k-128k (f16, k8, k8v8, copy bandwidth in the same run), compute-sanitizer
# memcheck and racecheck; and the same source built with -DALAP_ATTN_MMA=0, the scalar P·V that the
# HIP (RDNA3) build runs, tested, sanitised and timed on this GPU. From the repository root.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; } > "$o/machine.txt" 2>&1
cat "$o/machine.txt"
OUT=$o/attn ALAP_VARIANT="-DALAP_ATTN_MMA=0" ALAP_VARIANT_CTX=4096,32768 ALAP_SAN_VARIANTS=1 ALAP_SAN_TIMEOUT=150 \
  bash tests/kernels/gpu/run_h200.sh > "$o/attn.txt" 2>&1
echo "attention rc=$?"
grep -vE "^\s*$" "$o/attn.txt" | grep -E "rc=|PASS|FAIL|max error|variant|memcheck|racecheck|build took|copy|^ *(f16|k8|k8v8) " | head -80
echo "done at $(( $(date +%s) - start )) s"
