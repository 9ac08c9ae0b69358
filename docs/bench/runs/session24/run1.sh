#!/bin/bash
# Session 24, device call 1 (the H200 host's Xeon CPU only): the packed decode read-ahead of Q8_0
# and Q4_0/Q5_0 against none, every kernel variant. cpu_bench_ab is the measurement build
# (runs/session24/readahead_measure.patch): ALAP_AB=f=A,B alternates decode tokens between flag
# values A and B in one run (A B B A ...) and prints the medians and the median of the B/A pairs.
# Flag bits: 1 = AVX-512 Q8_0 decode without read-ahead, 2 = AVX-512 Q4_0/Q5_0 without,
# 4 = 256-bit Q8_0 without, 8 = 256-bit Q4_0/Q5_0 without; 0 = the shipped code.
set -u
cd .dev/s24 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
grep -o 'avx512_vnni\|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
./make_random_model llama3.2-1b q8_0 /tmp/l1q8.gguf > /dev/null
./make_random_model llama3.2-1b q4_0 /tmp/l1q40.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/qq4k.gguf > /dev/null
for v in avx512vnni avxvnni avx2; do
  for t in 1 4 16; do
    for r in 1 2; do
      [ $t = 16 ] && [ $r = 2 ] && continue
      echo -n "$v t$t r$r llama q8_0 (Q8_0 none): "
      ALAP_CPU_VARIANT=$v ALAP_AB=f=0,5 ./cpu_bench_ab -m /tmp/l1q8.gguf --threads $t -p 0 -n 16 2>&1 | grep -E '^AB' | cut -c7-
      echo -n "$v t$t r$r llama q4_0 (Q4_0 none): "
      ALAP_CPU_VARIANT=$v ALAP_AB=f=5,15 ./cpu_bench_ab -m /tmp/l1q40.gguf --threads $t -p 0 -n 16 2>&1 | grep -E '^AB' | cut -c7-
      echo -n "$v t$t r$r qwen q4_k (Q5_0 none): "
      ALAP_CPU_VARIANT=$v ALAP_AB=f=5,15 ./cpu_bench_ab -m /tmp/qq4k.gguf --threads $t -p 0 -n 24 2>&1 | grep -E '^AB' | cut -c7-
    done
  done
done
