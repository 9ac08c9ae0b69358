#!/bin/bash
# Session 23, device call 5: Q6_K's AVX-VNNI decode with each nibble and top-bit vector loaded once
# and the top bits in chains of their own (q6k_try.patch on 407f637, "q6try") against 407f637
# ("head3"), on the H200 host's Xeon (the avxvnni kernels run on Intel cores only). Run from
# .dev/s23; whole runs of the two builds in turn.
set -u
cd .dev/s23 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q6_k /tmp/l1q6_k.gguf > /dev/null
echo "== packed_bench, one thread, 256x2048 warm, avxvnni forced"
for r in 1 2 3; do
  for b in head3 q6try; do
    ./packed_bench_$b --variant avxvnni --types q6_k --shapes 256x2048 --threads 1 --reps 7 --cold-mb 0 2>&1 \
      | grep -E '^Q[0-9]_[0-9K]  ' | sed "s/^/$b run $r: /"
  done
done
echo "== cpu_bench decode, avxvnni forced, random Llama-3.2-1B Q6_K"
for t in 1 4; do
  for r in 1 2; do
    for b in head3 q6try; do
      echo -n "threads $t $b run $r: "
      ALAP_CPU_VARIANT=avxvnni ./cpu_bench_$b -m /tmp/l1q6_k.gguf --threads $t -p 0 -n 10 2>&1 | grep '^decode' | cut -c1-75
    done
  done
done
