#!/bin/bash
# Session 30: prefill split by tokens (core/model/forward.cpp, eval_chunk) against the split by
# weight rows, in one binary, alternating. Needs a build dir with the libraries:
#   B=<build dir> MODELS=<dir of the eval model> RANDOM_MODELS=<dir> bash ab.sh > ab.log
# RANDOM_MODELS holds make_random_model's qwen2.5-0.5b and llama3.2-1b files in q4_k and q8_0,
# named <shape>-<type>.gguf. "rows": ALAP_PREFILL_SLICE_TOKENS=100000 (never split by tokens);
# "tokens": ALAP_PREFILL_SLICE_KB=1000000 (split by tokens whenever a thread gets >= 8 tokens,
# whatever the layer's bytes); "default": neither (the shipped rule: quantised weights, >= 8 tokens
# a thread and <= 768 KB of a layer's weights per token of a thread; so the f16 file's "default" is
# the row split, and its rows-against-default ratios show this machine's noise between identical
# runs). Program: ../session28/prefill_repeat.cpp (median of R prefills of P tokens at depth 0,
# cache k8, max_batch 512). ab.log: commit 0a0645b, 2026-12-03 18:25-18:33 UTC, this 2-vCPU Zen 5.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
models=${MODELS:-$root/../shared/models}
rm_dir=${RANDOM_MODELS:-/tmp/rm}
L="$B/core/model/libalap_core_model.a $B/core/gguf/libalap_core_gguf.a $B/core/runtime/libalap_core_runtime.a -ldl $B/kernels/cpu/libalap_kernels.a -lpthread"
c++ -O3 -std=c++20 -I"$root" -I"$root/kernels/include" "$here/../session28/prefill_repeat.cpp" -o /tmp/s30_prefill_repeat $L
run() {  # label env file threads P reps
  echo "$1 $4t P=$5: $(env $2 /tmp/s30_prefill_repeat "$3" "$4" "$5" "$6")"
}
for r in 1 2 3; do
  for m in q4_k_m q8_0 f16; do
    f="$models/alap-eval-30m-$m.gguf"
    run "eval-$m one-thread" "X=1" "$f" 1 64 300
    for P in 16 32 64 128; do
      reps=$((19200 / P))
      run "eval-$m rows" "ALAP_PREFILL_SLICE_TOKENS=100000" "$f" 2 $P $reps
      run "eval-$m default" "X=1" "$f" 2 $P $reps
    done
  done
done
for r in 1 2 3; do
  for f in qwen2.5-0.5b-q4_k qwen2.5-0.5b-q8_0 llama3.2-1b-q4_k llama3.2-1b-q8_0; do
    for P in 64 128; do
      run "$f rows" "ALAP_PREFILL_SLICE_TOKENS=100000" "$rm_dir/$f.gguf" 2 $P 11
      run "$f tokens" "ALAP_PREFILL_SLICE_KB=1000000" "$rm_dir/$f.gguf" 2 $P 11
    done
  done
done
