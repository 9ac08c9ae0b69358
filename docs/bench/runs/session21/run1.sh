#!/bin/bash
# Session 21, device call 1: the f16 decode read-ahead (a0a87b5) on the H200 host's Xeon.
# Run from the carried folder (.dev/s21): cpu_bench_old (bb0d375), cpu_bench (a0a87b5),
# make_random_model, kernels_cpu_test, core_model_forward_test (a0a87b5), f16mv (the standalone
# read-ahead microbenchmark of docs/bench/cpu.md "f16 decode read-ahead (session 21)").
set -u
cd .dev/s21 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-200
echo "== kernels_cpu_test (every variant the CPU has)"; ./kernels_cpu_test 2>&1 | tail -1
for v in avx512vnni avxvnni avx2; do echo -n "== forward test, $v: "; ALAP_CPU_VARIANT=$v ./core_model_forward_test 2>&1 | tail -1; done
./make_random_model llama3.2-1b f16 /tmp/l1f16.gguf
for round in 1 2; do
  for v in avx512vnni avx2; do
    for t in 1 8; do
      for b in cpu_bench_old cpu_bench; do
        echo -n "round $round $v threads $t $b: "
        ALAP_CPU_VARIANT=$v ./$b -m /tmp/l1f16.gguf --cache f16 --threads $t --depth 0 -p 4 -n 8 2>&1 | grep -E "^decode|^paired" |
          sed -E 's/.*= ([0-9.]+) ms\/token median.*/\1 ms/; s/.*median ([0-9]+)% of its floor, median probe ([0-9.]+) GB\/s.*/paired \1% probe \2/' | tr '\n' ' '
        echo
      done
    done
  done
done
for s in "4096 4096" "14336 4096" "2048 8192" "1408 512"; do echo "== f16mv $s"; ./f16mv $s; done
