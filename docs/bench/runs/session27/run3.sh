#!/bin/bash
# Session 27, device call 3 (repo root): this tree's binaries (.dev/s27/bin, built here with the
# merged IQ4 code: CUDA form 1 of the IQ4 decode dot).
# 1. GPU: forward_gpu_device check (IQ4_NL, IQ4_XS among the types now), then end to end, random
#    Llama-3.2-1B / Qwen2.5-0.5B IQ4_XS against Q4_K (and IQ4_NL against Q4_0), 4k, k8, graphs.
# 2. The host's Xeon CPU: kernels_cpu_test under every variant it has; cpu_bench on random
#    Llama-3.2-1B IQ4_XS / Q4_K / IQ4_NL / Q4_0, 1 and 4 threads, alternating, two rounds.
set -u -o pipefail
out=${OUT:-s27-out}; mkdir -p "$out"
bin=$PWD/.dev/s27/bin
export LD_LIBRARY_PATH=$bin:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$bin/libalap_gpu.so
date -u; lscpu | grep -E 'Model name|^CPU\(s\)'
m=/tmp/s27m; mkdir -p $m
for spec in "llama3.2-1b iq4_xs" "llama3.2-1b q4_k" "llama3.2-1b iq4_nl" "llama3.2-1b q4_0" "qwen2.5-0.5b iq4_xs" "qwen2.5-0.5b q4_k"; do
  set -- $spec; $bin/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
echo "== check"
timeout 150 $bin/forward_gpu_device check > "$out/check.log" 2>&1; echo "check rc=$?"; grep -E "IQ4|failure" "$out/check.log" | tail -30
wait
echo "== bench"
for model in llama3.2-1b-iq4_xs llama3.2-1b-q4_k llama3.2-1b-iq4_nl llama3.2-1b-q4_0 qwen2.5-0.5b-iq4_xs qwen2.5-0.5b-q4_k \
             llama3.2-1b-iq4_xs llama3.2-1b-q4_k llama3.2-1b-iq4_nl llama3.2-1b-q4_0 qwen2.5-0.5b-iq4_xs qwen2.5-0.5b-q4_k; do
  timeout 40 $bin/forward_gpu_device bench $m/$model.gguf 4096 k8 -1 2>&1 | grep -E "^bench|a step:" | sed "s/^/$model: /"
done
date -u
echo "== CPU tests"
for v in avx512vnni avxvnni avx2 scalar; do echo "$v: $(ALAP_CPU_VARIANT=$v timeout 120 $bin/kernels_cpu_test 2>&1 | tail -1)"; done
echo "== CPU bench"
for r in 1 2; do
  for model in llama3.2-1b-iq4_xs llama3.2-1b-q4_k llama3.2-1b-iq4_nl llama3.2-1b-q4_0; do
    for t in 1 4; do
      echo "r$r $model t$t: $(timeout 60 $bin/cpu_bench -m $m/$model.gguf --threads $t -p 64 -n 16 2>&1 | grep -E '^(prefill|decode|paired)' | cut -c1-150 | tr '\n' ' ')"
    done
  done
done
date -u
