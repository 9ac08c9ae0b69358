#!/bin/bash
# Session 31: the k8v8 V sum on 16-bit probabilities (v16) against the f32 V sum it replaced.
# OLD: cpu_bench built from 23d05c1 (a worktree); NEW: this commit's. Each row runs old, new, old,
# new (pairs in one call on a noisy VM), attention alone and whole models, one and two threads.
# Usage: OLD=/path/old/cpu_bench NEW=/path/new/cpu_bench MODELS=../shared/models RM=/tmp/rm bash ab.sh
set -u
OLD=${OLD:?} NEW=${NEW:?} M=${MODELS:-../shared/models} RM=${RM:-/tmp/rm}
attn() {  # variant threads depth model
  for side in old new old new; do
    B=$OLD; [ $side = new ] && B=$NEW
    out=$(ALAP_CPU_VARIANT=$1 $B -m $4 --cache k8v8 --threads $2 --depth $3 -p 64 --attn-only 2>&1)
    dec=$(echo "$out" | grep '^attention cache' | sed 's/.*: \([0-9.]*\) ms\/token.*/\1/')
    pre=$(echo "$out" | grep '^prefill attention' | sed 's/.*64 tokens \([0-9.]*\) ms.*/\1/')
    echo "attn $1 t$2 d$3 $(basename $4) $side decode_ms $dec prefill64_ms $pre"
  done
}
whole() {  # variant threads depth model cache
  for side in old new old new; do
    B=$OLD; [ $side = new ] && B=$NEW
    out=$(ALAP_CPU_VARIANT=$1 $B -m $4 --cache $5 --threads $2 --depth $3 -p 64 -n 16 --json 2>/dev/null | tail -1)
    echo "whole $1 t$2 d$3 $(basename $4) $5 $side $out"
  done
}
for v in avx512vnni avxvnni avx2; do
  for d in 1024 4096; do attn $v 1 $d $M/alap-eval-30m-q8_0.gguf; done
done
attn avx512vnni 2 4096 $M/alap-eval-30m-q8_0.gguf
attn avx512vnni 1 4096 $RM/llama3.2-1b-q4_k.gguf
for v in avx512vnni avxvnni; do
  whole $v 2 4096 $M/alap-eval-30m-q4_k_m.gguf k8v8
  whole $v 2 4096 $RM/llama3.2-1b-q4_k.gguf k8v8
done
whole avx512vnni 2 4096 $RM/qwen2.5-0.5b-q4_k.gguf k8v8
whole avx512vnni 2 4096 $M/alap-eval-30m-q4_k_m.gguf k8
