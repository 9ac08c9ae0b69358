#!/bin/bash
# Session 22, device call 4: the 256-bit kernels' read-ahead of the other packed types into L2
# (prefetcht1) against L1 (prefetcht0, HEAD), decode tokens alternating within one run, on the H200
# host's Xeon. Run from the carried folder (.dev/s22): cpu_bench_mask (HEAD b0d51ce +
# mask_measure.patch: ALAP_AB=Q8HINT=0,M switches the types of mask M to prefetcht1 token by token,
# A B B A ...: 1 Q4_K, 2 Q5_K, 4 Q6_K, 8 Q4_0/Q5_0, 16 Q3_K/Q2_K), make_random_model.
set -u
cd .dev/s22 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q4_k /tmp/l1q4k.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/q05q4k.gguf > /dev/null
for v in avx2 avxvnni; do
  for t in 1 4; do
    for m in 1 4; do
      for r in 1 2; do
        echo -n "$v llama3.2-1b q4_k threads $t mask $m run $r: "
        ALAP_CPU_VARIANT=$v ALAP_AB=Q8HINT=0,$m ./cpu_bench_mask -m /tmp/l1q4k.gguf --threads $t -p 4 -n 40 2>&1 | grep '^AB'
      done
    done
  done
  for r in 1 2; do
    echo -n "$v qwen2.5-0.5b q4_k threads 1 mask 8 run $r: "
    ALAP_CPU_VARIANT=$v ALAP_AB=Q8HINT=0,8 ./cpu_bench_mask -m /tmp/q05q4k.gguf --threads 1 -p 4 -n 60 2>&1 | grep '^AB'
  done
done
