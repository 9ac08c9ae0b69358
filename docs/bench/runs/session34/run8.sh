#!/bin/bash
# Session 34, device call 8: the scalar decode body (the one HIP runs) under a graph a range: a
# library built with -DALAP_ATTN_MMA=0 (every decode attention on the scalar body; its P·V on FMAs
# as on HIP), forward_gpu_device check with graphs by range and with a capture a position, and one
# bench pair (Qwen2.5-0.5B Q4_K, 4k, k8) for the steady state.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
new=.dev/s34/new
export ALAP_GPU_LIBRARY=$PWD/.dev/s34/scalar/libalap_gpu.so
timeout 120 $new/forward_gpu_device check > "$o/check_scalar.txt" 2>&1
echo "check, scalar body, graphs by range: rc=$? $(tail -1 "$o/check_scalar.txt") $(grep -c ' ok$' "$o/check_scalar.txt") ok"
grep -v " ok$" "$o/check_scalar.txt" | head -5
ALAP_GPU_ONE_GRAPH=0 timeout 120 $new/forward_gpu_device check > "$o/check_scalar_baked.txt" 2>&1
echo "check, scalar body, a capture a position: rc=$? $(tail -1 "$o/check_scalar_baked.txt")"
m=/tmp/rm
mkdir -p $m
[ -f $m/qwen2.5-0.5b-q4_k.gguf ] || $new/make_random_model qwen2.5-0.5b q4_k $m/qwen2.5-0.5b-q4_k.gguf > /dev/null
for i in 1 2; do
  for e in 0 1; do
    echo "[ALAP_GPU_ONE_GRAPH=$e]"
    ALAP_GPU_ONE_GRAPH=$e ALAP_BENCH_SAMPLE=1 timeout 60 $new/forward_gpu_device bench $m/qwen2.5-0.5b-q4_k.gguf 4096 k8 -1 2>&1 | grep -E "a step:"
  done
done | tee "$o/bench_scalar.txt"
