#!/bin/bash
# session 19 device call 9 (experiment): the next step's graph captured on a stream of its own
# (ALAP_GPU_CAPTURE_STREAM=1) against the stream the step runs on.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
for mdl in qwen2.5-0.5b llama3-8b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for r in 1 2 3; do
    for v in 1 0; do
      out=$(ALAP_GPU_CAPTURE_STREAM=$v ALAP_BENCH_SAMPLE=1 ./fgd_cs bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
      echo "$mdl own=$v $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'a step: .*') | $(echo "$out" | grep -o 'captures at .*')"
    done
  done
  rm -f /tmp/$mdl.gguf
done
