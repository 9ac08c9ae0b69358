#!/bin/bash
# Session 28, device call 1: the H200 host's Xeon (Intel, AVX-512). Carried: .dev/s28/bin (stripped
# builds of this session: kernels_cpu_test, cpu_bench, make_random_model, and the A/B programs of
# ab.sh built against 6f393d4 (OLD) and 84cae48 (NEW)) and the eval model's Q4_K_M file.
# 1. kernels_cpu_test under every variant; 2. the elementwise steps and the eval model old/new;
# 3. f16 against k8 cache (cache_default.sh) on random Llama-3.2-1B / Qwen2.5-0.5B Q4_K.
set -u
B=.dev/s28/bin
E=.dev/s28/alap-eval-30m-q4_k_m.gguf
exec > "$OUT/run1.log" 2>&1
date -u; lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-200; nproc
for v in avx512vnni avxvnni avx2 scalar; do echo "kernels_cpu_test $v: $(ALAP_CPU_VARIANT=$v $B/kernels_cpu_test 2>&1 | tail -1)"; done
for side in OLD NEW OLD NEW; do echo "$side: $($B/s28_elementwise_$side | tr '\n' ' ')"; done
for t in 1 4; do
  for r in 1 2; do
    for side in OLD NEW; do
      echo "eval q4_k_m threads $t $side prefill: $($B/s28_prefill_repeat_$side $E $t 64 300)"
      echo "eval q4_k_m threads $t $side $($B/s28_decode_repeat_$side $E $t 200 5)"
    done
  done
done
mkdir -p /tmp/rm
$B/make_random_model llama3.2-1b q4_k /tmp/rm/l1q4k.gguf > /dev/null
$B/make_random_model qwen2.5-0.5b q4_k /tmp/rm/qq4k.gguf > /dev/null
date -u
BIN=$B M1=/tmp/rm/l1q4k.gguf M2=/tmp/rm/qq4k.gguf THREADS=4 VARIANTS="avx512vnni avxvnni" DEPTHS="0 4096" \
  timeout 420 bash docs/bench/runs/session28/cache_default.sh > "$OUT/cache_default_xeon.jsonl"
date -u
