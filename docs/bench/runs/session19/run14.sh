#!/bin/bash
# session 19 device call 14: the end-to-end table of issue 6 again (docs/bench/gpu.md "End-to-end
# on the GPU"): Qwen2.5-0.5B and Llama-3.2-1B shapes in Q4_K and Q8_0, 4k (filled by prefill) and
# 32k (decode at depth, cache taken as filled), f16 and k8; greedy (host argmax over the row, as
# that table) and sampled (the app's defaults, best logits from the device).
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
out=${OUT:-/tmp}/run14.txt
: > $out
for mdl in qwen2.5-0.5b llama3.2-1b; do
  for ty in q4_k q8_0; do
    ./make_random_model $mdl $ty /tmp/m.gguf > /dev/null
    for ctx in 4096 32768; do
      fill=""; [ $ctx = 32768 ] && fill=nofill
      for mode in f16 k8; do
        g=$(./fgd bench /tmp/m.gguf $ctx $mode -1 $fill 2>&1 | grep '^bench')
        sm=$(ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/m.gguf $ctx $mode -1 $fill 2>&1 | grep -o 'decode [0-9.]* tok/s')
        echo "$mdl $ty | $g | sampled $sm" | tee -a $out
      done
    done
  done
done
