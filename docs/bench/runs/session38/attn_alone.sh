#!/bin/bash
# Attention alone at 4k and 16k (issue 5): one decode token over the random Llama-3.2-1B Q4_K
# file's cache shape (16 layers, 32 query heads over 8 KV heads of 64), f16 / k8 / k8v8 rotated in
# each round, one and two threads. cpu_bench --attn-only prints the token's time, the K/V bytes it
# reads and the read probe of the same thread count. Session 38: attn_alone.log.
set -eu
bench=${BENCH:-build/default/bin/cpu_bench}
model=${MODEL:-/tmp/r-llama3.2-1b-q4_k.gguf}
for round in 1 2 3; do
  for depth in 4096 16384; do
    for t in 1 2; do
      for cache in f16 k8 k8v8; do
        "$bench" -m "$model" --attn-only --cache "$cache" --threads "$t" --depth "$depth" -p 0 --json | grep '^{' |
          sed "s/^{/{\"round\":$round,/"
      done
    done
  done
done
