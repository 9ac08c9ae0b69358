#!/bin/bash
# Session 33, device call 1: decode attention launched as a programmatic dependent in the GPU step.
# 1. run_h200.sh: attn_gpu_test (PDL runs bit-identical to plain), memcheck/racecheck, and the decode
#    bench at 4k-32k with the step pair columns (row store + attention, plain and PDL) to set the depth.
# 2. forward_gpu_device check twice: default depth, and ALAP_GPU_ATTN_PDL_CTX=0 (PDL in every step).
# 3. End to end A/B: off (depth 1e9) / on (depth 0) alternating, Q4_K models at 4k and 32k.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 300 bash tests/kernels/gpu/run_h200.sh --ctx 4096,8192,16384,32768 --no-prefill \
  > "$o/attn.txt" 2>&1
echo "attn rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|max error|memcheck|racecheck|ERROR SUMMARY" "$o/attn.txt" | head -12
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin ALAP_BENCH_QUICK=1 \
  ALAP_BENCH_ENVS="ALAP_GPU_ATTN_PDL_CTX=1000000000;ALAP_GPU_ATTN_PDL_CTX=0;ALAP_GPU_ATTN_PDL_CTX=1000000000;ALAP_GPU_ATTN_PDL_CTX=0" \
  timeout 330 bash tests/core/model/run_forward_h200.sh 300 > "$o/fwd.txt" 2>&1
echo "forward rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "FAIL|fail|check rc|cases" "$o/fwd.txt" | head -12
export LD_LIBRARY_PATH=/tmp/alap-fwd:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -f /tmp/alap-fwd/libalap_gpu.so ] && export ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so
ALAP_GPU_ATTN_PDL_CTX=0 timeout 60 .dev/s33/gbin/forward_gpu_device check > "$o/check_pdl.txt" 2>&1
echo "check with PDL every step rc=$? (at $(( $(date +%s) - start )) s)"
tail -3 "$o/check_pdl.txt"
echo "done at $(( $(date +%s) - start )) s"
