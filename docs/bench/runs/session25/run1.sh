#!/bin/bash
# Session 25, device call 1 (the H200 host's Xeon CPU only): the light packed types' decode
# read-ahead on against off in the shipped build (cpu_bench --read-ahead-ab alternates decode tokens
# on off off on ... in one run and prints the medians and the median off/on ratio of the pairs).
# Plain AVX2 has no pass without it, so only the VNNI kernels are run. The Llama Q4_0 file's tied
# output matrix is Q8_0 (a third of its bytes), so its row moves both types.
set -u
cd .dev/s25 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)|Vendor" | cut -c1-200
grep -o 'avx512_vnni\|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
./make_random_model llama3.2-1b q8_0 /tmp/l1q8.gguf > /dev/null
./make_random_model llama3.2-1b q4_0 /tmp/l1q40.gguf > /dev/null
for r in 1 2; do
  for v in avx512vnni avxvnni; do
    for t in 1 4; do
      for m in q8 q40; do
        echo -n "$v t$t r$r llama $m: "
        ALAP_CPU_VARIANT=$v timeout 60 ./cpu_bench -m /tmp/l1$m.gguf --threads $t -p 0 -n 16 --read-ahead-ab 2>&1 | grep 'read-ahead ab' | cut -c15-
      done
    done
  done
done
