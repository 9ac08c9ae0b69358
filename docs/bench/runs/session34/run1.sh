#!/bin/bash
# Session 34, device call 1: one decode graph for every position; qwen3's q/k norms in the RoPE +
# row-store launch.
# 1. run_h200.sh: attn_gpu_test (new: pos_dev bit-identical to plain, plain and PDL; bad positions),
#    memcheck/racecheck, and the decode bench 4k-32k (the plain path after the span change).
# 2. run_ops_h200.sh: ops_gpu_test (new: rope_store_1 with pos_dev, with q/k norms, bad positions), sanitizers.
# 3. forward_gpu_device check with the new library: one graph (default) and ALAP_GPU_ONE_GRAPH=0.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 280 bash tests/kernels/gpu/run_h200.sh --ctx 4096,16384,32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$? $(at)"
grep -E "PASS|FAIL|failure|memcheck|racecheck|differs|not finite" "$o/attn.txt" | head -12
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=100 timeout 170 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? $(at)"
grep -E "PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -8
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$PWD/.dev/s34/new/libalap_gpu.so
fgd=.dev/s34/new/forward_gpu_device
timeout 90 $fgd check > "$o/check.txt" 2>&1
echo "check (one graph) rc=$? $(tail -1 "$o/check.txt") $(at)"
grep -c " ok$" "$o/check.txt"; grep -v " ok$" "$o/check.txt" | head -5
ALAP_GPU_ONE_GRAPH=0 timeout 90 $fgd check > "$o/check_baked.txt" 2>&1
echo "check (a graph a position) rc=$? $(tail -1 "$o/check_baked.txt") $(at)"
echo "done $(at)"
