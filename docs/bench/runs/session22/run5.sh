#!/bin/bash
# Session 22, device call 5: the AVX-VNNI (256-bit) packed decode with two dpbusd chains a half
# group (alternate quads) against one, decode tokens alternating within one run, on the H200 host's
# Xeon. Run from the carried folder (.dev/s22): cpu_bench_chains (b0d51ce + chains_measure.patch:
# ALAP_AB=Q8HINT=0,1 switches the second chain off (0) and on (1) token by token, A B B A ...),
# make_random_model.
set -u
cd .dev/s22 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q4_k /tmp/l1q4k.gguf > /dev/null
./make_random_model llama3.2-1b q8_0 /tmp/l1q8.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/q05q4k.gguf > /dev/null
for t in 1 4 16; do
  for r in 1 2; do
    echo -n "avxvnni llama3.2-1b q4_k threads $t run $r: "
    ALAP_CPU_VARIANT=avxvnni ALAP_AB=Q8HINT=0,1 ./cpu_bench_chains -m /tmp/l1q4k.gguf --threads $t -p 4 -n 30 2>&1 | grep '^AB'
  done
done
for r in 1 2; do
  echo -n "avxvnni llama3.2-1b q8_0 threads 1 run $r: "
  ALAP_CPU_VARIANT=avxvnni ALAP_AB=Q8HINT=0,1 ./cpu_bench_chains -m /tmp/l1q8.gguf --threads 1 -p 4 -n 30 2>&1 | grep '^AB'
  echo -n "avxvnni qwen2.5-0.5b q4_k threads 1 run $r: "
  ALAP_CPU_VARIANT=avxvnni ALAP_AB=Q8HINT=0,1 ./cpu_bench_chains -m /tmp/q05q4k.gguf --threads 1 -p 4 -n 40 2>&1 | grep '^AB'
done
echo "== avx2 for comparison (the chains do not apply): llama3.2-1b q4_k, one thread"
ALAP_CPU_VARIANT=avx2 ALAP_AB=Q8HINT=0,1 ./cpu_bench_chains -m /tmp/l1q4k.gguf --threads 1 -p 4 -n 30 2>&1 | grep '^AB'
