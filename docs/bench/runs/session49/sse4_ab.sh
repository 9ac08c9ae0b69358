#!/bin/bash
# Session 49: the sse4 variant before (A = fb9e882) and after (B = this session's commits), cpu_bench
# builds copied to /tmp/cb_A and /tmp/cb_B, alternated A B A B on the 2-vCPU Zen 5 guest forced to sse4.
# usage: sse4_ab.sh MODEL THREADS DEPTH ROUNDS
m=$1 t=$2 dep=$3 n=$4
for i in $(seq "$n"); do
  for side in A B; do
    r=$(ALAP_CPU_VARIANT=sse4 /tmp/cb_$side -m "$m" --cache k8 --threads "$t" --depth "$dep" -p 32 -n 8 2>&1)
    echo "$side $(basename "$m") t$t d$dep $(echo "$r" | grep -o 'prefill 32 tokens: [0-9.]* tok/s') | $(echo "$r" | grep -o 'decode  8 tokens: [0-9.]* tok/s')"
  done
done
