#!/bin/bash
# Session 30, device call 1: prefill split by tokens on the H200 host's Xeon (16 cores, shared L3),
# where a thread count of 4-16 tests the rule that picks the split (core/model/forward.cpp,
# eval_chunk). Carried: .dev/s30/bin (stripped local builds of this tree: core_model_forward_test,
# prefill_repeat from ../session28/prefill_repeat.cpp, make_random_model) and .dev/s30/models (the
# eval model's Q4_K_M and Q8_0 files). Labels as in ab.sh: "rows" never splits by tokens,
# "tokens" always does (>= 8 tokens a thread), "default" is the shipped rule. xeon.log: 2026-12-03
# 18:21-18:22 UTC, binaries built from commit 0a0645b's code.
set -u
B=.dev/s30/bin
M=.dev/s30/models
exec > "$OUT/xeon.log" 2>&1
date -u; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core\(s\)|Socket|L3" | cut -c1-120; nproc
for v in avx512vnni avxvnni avx2; do
  echo "forward_test $v: $(ALAP_CPU_VARIANT=$v $B/core_model_forward_test 2>&1 | tail -1)"
done
mkdir -p /tmp/rm
$B/make_random_model qwen2.5-0.5b q4_k /tmp/rm/qwen2.5-0.5b-q4_k.gguf > /dev/null
$B/make_random_model llama3.2-1b q4_k /tmp/rm/llama3.2-1b-q4_k.gguf > /dev/null
run() {  # label env file threads P reps
  echo "$1 $4t P=$5: $(env $2 $B/prefill_repeat "$3" "$4" "$5" "$6")"
}
for r in 1 2; do
  for m in q4_k_m q8_0; do
    for T in 2 4 8 16; do
      run "eval-$m rows" "ALAP_PREFILL_SLICE_TOKENS=100000" "$M/alap-eval-30m-$m.gguf" $T 128 150
      run "eval-$m default" "X=1" "$M/alap-eval-30m-$m.gguf" $T 128 150
    done
  done
  for T in 4 8 16; do
    run "qwen2.5-0.5b-q4_k rows" "ALAP_PREFILL_SLICE_TOKENS=100000" /tmp/rm/qwen2.5-0.5b-q4_k.gguf $T 128 9
    run "qwen2.5-0.5b-q4_k tokens" "ALAP_PREFILL_SLICE_KB=1000000" /tmp/rm/qwen2.5-0.5b-q4_k.gguf $T 128 9
  done
  for T in 4 8; do
    run "llama3.2-1b-q4_k rows" "ALAP_PREFILL_SLICE_TOKENS=100000" /tmp/rm/llama3.2-1b-q4_k.gguf $T 128 7
    run "llama3.2-1b-q4_k tokens" "ALAP_PREFILL_SLICE_KB=1000000" /tmp/rm/llama3.2-1b-q4_k.gguf $T 128 7
  done
done
date -u
