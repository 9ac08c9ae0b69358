#!/bin/bash
# Session 22, device call 3: the 256-bit kernels' Q8_0 read-ahead into L2 (prefetcht1, HEAD) against
# L1 (prefetcht0), decode tokens alternating within one run, on the H200 host's Xeon. Run from the
# carried folder (.dev/s22): cpu_bench_q8ab (HEAD d3dd9d5 + q8_measure.patch: ALAP_AB=Q8HINT=3,2
# switches the packed 256-bit Q8_0 read-ahead between t0 (3) and t1 (2) token by token, A B B A ...),
# make_random_model.
set -u
cd .dev/s22 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q8_0 /tmp/l1q8.gguf > /dev/null
./make_random_model qwen2.5-0.5b q8_0 /tmp/q05q8.gguf > /dev/null
for v in avx2 avxvnni; do
  for t in 1 4 16; do
    for r in 1 2; do
      echo -n "$v llama3.2-1b q8_0 threads $t run $r: "
      ALAP_CPU_VARIANT=$v ALAP_AB=Q8HINT=3,2 ./cpu_bench_q8ab -m /tmp/l1q8.gguf --threads $t -p 4 -n 40 2>&1 | grep '^AB'
    done
  done
  for r in 1 2; do
    echo -n "$v qwen2.5-0.5b q8_0 threads 1 run $r: "
    ALAP_CPU_VARIANT=$v ALAP_AB=Q8HINT=3,2 ./cpu_bench_q8ab -m /tmp/q05q8.gguf --threads 1 -p 4 -n 60 2>&1 | grep '^AB'
  done
done
