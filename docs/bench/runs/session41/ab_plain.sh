#!/bin/sh
# Plain-weight (f16) prefill before and after session 41's AVX-512 tiles: cpu_bench of 59441a6 (OLD)
# and of the new code (NEW) in turn, three rounds, default k8 cache, depth 0.
# Usage: ab_plain.sh OLD_CPU_BENCH NEW_CPU_BENCH EVAL_F16 QWEN_F16 LLAMA_F16
old=$1 new=$2 eval=$3 qwen=$4 llama=$5
for round in 1 2 3; do
  for m in "$eval 512" "$qwen 128" "$llama 64"; do
    set -- $m
    for t in 1 2; do
      for b in old new; do
        bin=$old; [ $b = new ] && bin=$new
        printf 'round %s %s %s t%s: ' "$round" "$b" "$(basename "$1")" "$t"
        "$bin" -m "$1" --threads "$t" -p "$2" -n 1 2>&1 | grep '^prefill'
      done
    done
  done
done
