#!/bin/bash
# Session 34, device call 9 (after the final read): the per-head q/k norm of the RoPE + row-store
# kernel now calls rms_norm_kernel's own row_inv_rms (templated on the block size) instead of a copy
# of its order. ops_gpu_test (byte for byte against gpu_add_bias + gpu_rms_norm + gpu_bias_rope_1
# and the stores; every norm kernel), no sanitizers; forward_gpu_device check (qwen3 included).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 timeout 150 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$?"; grep -E "PASS|FAIL" "$o/ops.txt" | head -5
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$PWD/.dev/s34/new/libalap_gpu.so
timeout 90 .dev/s34/new/forward_gpu_device check > "$o/check.txt" 2>&1
echo "check rc=$? $(tail -1 "$o/check.txt") $(grep -c ' ok$' "$o/check.txt") ok"
