#!/bin/bash
# Session 22, device call 2: a short context's decode attention on the calling thread, on the H200
# host's 16-core Xeon, with more threads than the development machine has. Run from the carried
# folder (.dev/s22): cpu_bench_ab (HEAD 833c5a9 + ab_measure.patch: ALAP_ATTN_ALONE=0 turns the
# rule off per call, ALAP_AB=NAME=A,B alternates NAME between A and B token by token, A B B A ...),
# make_random_model, and the eval model's Q4_K_M file.
set -u
cd .dev/s22 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q4_k /tmp/l1q4k.gguf > /dev/null
for t in 2 4 8 16; do
  for r in 1 2; do
    echo -n "eval q4_k_m threads $t depth 32-232 run $r: "
    ALAP_AB=ALAP_ATTN_ALONE=0,1 ./cpu_bench_ab -m alap-eval-30m-q4_k_m.gguf --threads $t -p 32 -n 200 2>&1 | grep '^AB'
  done
done
for t in 2 8 16; do
  for r in 1 2; do
    echo -n "llama3.2-1b q4_k threads $t depth 4-64 run $r: "
    ALAP_AB=ALAP_ATTN_ALONE=0,1 ./cpu_bench_ab -m /tmp/l1q4k.gguf --threads $t -p 4 -n 60 2>&1 | grep '^AB'
  done
done
