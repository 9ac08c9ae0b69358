#!/bin/bash
# Session 23, device call 2: the AVX-VNNI decode of Q5_K two sub-blocks a pass, and of Q6_K and
# Q3_K with compile-time step indices (commit 2a65fa5), against the build before them, on the H200
# host's Xeon. Run from the carried folder (.dev/s23): *_q4kab / packed_bench_ab (call 1's
# measurement build, b5b650f + q4k_chunks_measure.patch, its default: the Q4_K chunks on, so
# "old" differs from "new" only in Q5_K, Q6_K and Q3_K), cpu_bench_new / packed_bench_new (2a65fa5),
# make_random_model. Whole runs of the two builds in turn (A B A B).
set -u
cd .dev/s23 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
for t in q5_k q6_k q3_k; do ./make_random_model llama3.2-1b $t /tmp/l1$t.gguf > /dev/null; done
echo "== packed_bench, one thread, 256x2048 warm in L2, avxvnni forced"
for r in 1 2; do
  for b in old new; do
    bin=./packed_bench_ab; [ $b = new ] && bin=./packed_bench_new
    $bin --variant avxvnni --types q5_k,q6_k,q3_k,q4_k --shapes 256x2048 --threads 1 --reps 7 --cold-mb 0 2>&1 \
      | grep -E '^Q[0-9]_[0-9K]  ' | sed "s/^/$b run $r: /"
  done
done
echo "== cpu_bench decode, avxvnni forced, random Llama-3.2-1B"
for t in 1 4; do
  for m in q5_k q3_k q6_k; do
    for r in 1 2; do
      for b in old new; do
        bin=./cpu_bench_q4kab; [ $b = new ] && bin=./cpu_bench_new
        echo -n "$m threads $t $b run $r: "
        ALAP_CPU_VARIANT=avxvnni $bin -m /tmp/l1$m.gguf --threads $t -p 0 -n 10 2>&1 | grep '^decode' | cut -c1-75
      done
    done
  done
done
