#!/bin/bash
# Session 23, device call 3: the AVX-VNNI decode changes of 2a65fa5 (Q5_K two sub-blocks a pass;
# Q6_K and Q3_K steps at compile-time indices) within one run, tokens alternating, on the H200
# host's Xeon. Run from the carried folder (.dev/s23): cpu_bench_ab2 (2a65fa5 +
# k_steps_measure.patch: ALAP_AB=NAME=0,1 switches both changes off (0) and on (1) token by
# token, A B B A ...; Q4_K keeps its chunks either way), make_random_model, the eval Q4_K_M file.
set -u
cd .dev/s23 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
for t in q5_k q6_k q3_k; do ./make_random_model llama3.2-1b $t /tmp/l1$t.gguf > /dev/null; done
for t in 1 4 16; do
  for m in q5_k q6_k q3_k; do
    for r in 1 2; do
      echo -n "avxvnni llama3.2-1b $m threads $t run $r: "
      ALAP_CPU_VARIANT=avxvnni ALAP_AB=K=0,1 ./cpu_bench_ab2 -m /tmp/l1$m.gguf --threads $t -p 0 -n 20 2>&1 | grep '^AB'
    done
  done
  echo -n "avxvnni eval q4_k_m threads $t: "
  ALAP_CPU_VARIANT=avxvnni ALAP_AB=K=0,1 ./cpu_bench_ab2 -m eval-q4_k_m.gguf --threads $t -p 0 -n 200 2>&1 | grep '^AB'
done
