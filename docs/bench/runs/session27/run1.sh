#!/bin/bash
# Session 27, device call 1 (repo root): IQ4_NL / IQ4_XS on the H200.
# 1. forward_gpu_device check with ALAP_CHECK_IQ4=1 (carried binaries of this tree: .dev/s27/bin):
#    GPU logits against the CPU forward pass for f16, q8_0, q4_k, iq4_nl, iq4_xs tiny models;
# 2. end to end: random Llama-3.2-1B and Qwen2.5-0.5B in IQ4_XS (Qwen's 896-wide rows IQ4_NL) against
#    Q4_K, decode at 4k (k8, graphs) and prefill;
# 3. gpu_iq4.sh (kernels from source: ops_gpu_test for the IQ4 types on the byte-permute and the
#    plain builds, the whole ops_gpu_test, --bench-decode % of copy), sanitizers skipped here.
set -u -o pipefail
out=${OUT:-s27-out}; mkdir -p "$out"
bin=$PWD/.dev/s27/bin
export LD_LIBRARY_PATH=$bin:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$bin/libalap_gpu.so
date -u
m=/tmp/s27m; mkdir -p $m
for spec in "llama3.2-1b iq4_xs" "llama3.2-1b q4_k" "qwen2.5-0.5b iq4_xs" "qwen2.5-0.5b q4_k"; do
  set -- $spec; $bin/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
echo "== check"
ALAP_CHECK_IQ4=1 timeout 120 $bin/forward_gpu_device check 2>&1 | tee "$out/check.log" | tail -40
wait
echo "== bench"
for model in llama3.2-1b qwen2.5-0.5b; do
  for t in iq4_xs q4_k iq4_xs q4_k; do
    timeout 40 $bin/forward_gpu_device bench $m/$model-$t.gguf 4096 k8 -1 2>&1 | grep -v '^device:' | sed "s/^/$model $t: /" | tee -a "$out/bench.log"
  done
done
date -u
ALAP_DEV_SKIP_SAN=1 timeout 420 bash docs/bench/runs/session27/gpu_iq4.sh 2>&1 | tail -80
date -u
