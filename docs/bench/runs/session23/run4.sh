#!/bin/bash
# Session 23, device call 4: Q5_K's fifth bits on AVX-VNNI as their own vpdpbusd chain (qh & 2^j,
# the sum shifted to 16x) against merging them into the code (2a65fa5), on the H200 host's Xeon.
# Run from .dev/s23: *_head2 (2a65fa5), *_q5split (the change), make_random_model. Whole runs of
# the two builds in turn.
set -u
cd .dev/s23 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q5_k /tmp/l1q5_k.gguf > /dev/null
echo "== packed_bench, one thread, 256x2048 warm, avxvnni forced"
for r in 1 2 3; do
  for b in head2 q5split; do
    ./packed_bench_$b --variant avxvnni --types q5_k --shapes 256x2048 --threads 1 --reps 7 --cold-mb 0 2>&1 \
      | grep -E '^Q[0-9]_[0-9K]  ' | sed "s/^/$b run $r: /"
  done
done
echo "== cpu_bench decode, avxvnni forced, random Llama-3.2-1B Q5_K"
for t in 1 4 16; do
  for r in 1 2 3; do
    for b in head2 q5split; do
      echo -n "threads $t $b run $r: "
      ALAP_CPU_VARIANT=avxvnni ./cpu_bench_$b -m /tmp/l1q5_k.gguf --threads $t -p 0 -n 10 2>&1 | grep '^decode' | cut -c1-75
    done
  done
done
