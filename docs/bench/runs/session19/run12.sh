#!/bin/bash
# session 19 device call 12: a graph step's host time inside run() (before the launch, waiting at
# its end) and outside it, beside the step in the loop and the device alone.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
for mdl in qwen2.5-0.5b llama3-8b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for r in 1 2; do
    out=$(ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
    echo "$mdl $(echo "$out" | grep -o 'decode [0-9.]* tok/s')"
    echo "$out" | grep -E 'a step:|a graph step|host cost'
  done
  rm -f /tmp/$mdl.gguf
done
