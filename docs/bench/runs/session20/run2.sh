#!/bin/bash
# session 20 device call 2: Q4_K decode products in other piece kinds and rows a block (v0 = HEAD;
# v1: 32-value pieces for every Q4_K row, 8 rows a block; v2: the same, 4 rows; v3: 8 rows for every
# type; v4: 2 rows), kernel alone (ops_gpu_test --bench, Q4_K) and in the decode step (fgd bench).
cd "$(dirname "$0")"
date -u
./make_random_model llama3-8b q4_k /tmp/l8.gguf > /dev/null
./make_random_model llama3.2-1b q4_k /tmp/l1.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/q05.gguf > /dev/null
for v in v0 v1 v2 v3 v4; do
  echo "== $v"
  LD_LIBRARY_PATH=$PWD/$v ALAP_BENCH_TYPES=Q4_K timeout 100 ./ops_gpu_test --bench 2>&1 | grep -E '^\| Q4_K'
done
date -u
for r in 1 2; do
  for v in v0 v1 v2 v3 v4; do
    for m in l8 l1 q05; do
      out=$(ALAP_GPU_LIBRARY=$PWD/$v/libalap_gpu.so LD_LIBRARY_PATH=$PWD/$v ./fgd bench /tmp/$m.gguf 4096 k8 -1 nofill 2>&1)
      echo "$r $v $m $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'a step: [0-9.]* us.*back to back' | grep -o '[0-9.]* us as a graph')"
    done
  done
done
date -u
