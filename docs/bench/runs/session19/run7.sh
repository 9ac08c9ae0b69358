#!/bin/bash
# session 19 device call 7: where a sampled decode step's time goes: the step in the loop against
# its graph replayed back to back (the device alone); the rest is the host between steps.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
for mdl in qwen2.5-0.5b llama3.2-1b llama3.2-3b llama3-8b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for ctx in 4096 32768; do
    for r in 1 2; do
      out=$(ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/$mdl.gguf $ctx k8 -1 nofill 2>&1)
      echo "$mdl ctx $ctx $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'a step: .*') | $(echo "$out" | grep -o '[0-9]* calls a step')"
    done
  done
  rm -f /tmp/$mdl.gguf
done
