#!/bin/bash
# session 20 device call 3: the candidate rule (v5: Q4_K rows of <= 64 pieces of 64 values in
# pieces of 32, Q4_K's 32-value pieces 4 rows a block) checked (ops_gpu_test whole, memcheck on
# --small, fgd check) and timed against HEAD (v0) and v6 (v5 + the same for Q6_K) in the decode
# step (fgd bench, three rounds) and alone (ops_gpu_test --bench, Q4_K and Q6_K).
cd "$(dirname "$0")"
date -u
export ALAP_GPU_LIBRARY=$PWD/v5/libalap_gpu.so LD_LIBRARY_PATH=$PWD/v5
timeout 200 ./ops_gpu_test 2>&1 | tail -2
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 200 $S --tool memcheck ./ops_gpu_test --small 2>&1 | tail -2
timeout 200 ./fgd check 2>&1 | tail -1
date -u
unset ALAP_GPU_LIBRARY LD_LIBRARY_PATH
for v in v0 v5 v6; do
  echo "== $v"
  LD_LIBRARY_PATH=$PWD/$v ALAP_BENCH_TYPES=Q4_K,Q6_K timeout 100 ./ops_gpu_test --bench 2>&1 | grep -E '^\| Q[46]_K \| [0-9]+ × [0-9]+ \| [0-9.]+ \|'
done
date -u
./make_random_model llama3-8b q4_k /tmp/l8.gguf > /dev/null
./make_random_model llama3.2-1b q4_k /tmp/l1.gguf > /dev/null
./make_random_model llama3.2-3b q4_k /tmp/l3.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/q05.gguf > /dev/null
for r in 1 2 3; do
  for v in v0 v5 v6; do
    for m in l8 l3 l1 q05; do
      out=$(ALAP_GPU_LIBRARY=$PWD/$v/libalap_gpu.so LD_LIBRARY_PATH=$PWD/$v ./fgd bench /tmp/$m.gguf 4096 k8 -1 nofill 2>&1)
      echo "$r $v $m $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'a step: [0-9.]* us.*back to back' | grep -o '[0-9.]* us as a graph')"
    done
  done
done
date -u
