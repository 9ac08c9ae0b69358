#!/bin/bash
# session 19 device call 8 (experiment): the gap between a decode step in the loop and the same
# graph replayed back to back: executables uploaded on a side stream after each update
# (ALAP_GPU_UPLOAD=1, this library) or at their first launch (=0); PDL off as a third setting.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
for mdl in qwen2.5-0.5b llama3.2-1b llama3-8b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for r in 1 2 3; do
    for v in "ALAP_GPU_UPLOAD=1" "ALAP_GPU_UPLOAD=0" "ALAP_GPU_UPLOAD=1 ALAP_GPU_PDL=0"; do
      out=$(env $v ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
      echo "$mdl [$v] $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'a step: .*') | $(echo "$out" | grep -o '[0-9.]* us a graph launch')"
    done
  done
  rm -f /tmp/$mdl.gguf
done
