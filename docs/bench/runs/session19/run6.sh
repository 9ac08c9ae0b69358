#!/bin/bash
# session 19 device call 6: token ids from page-locked memory (fgd_ids) against ordinary memory
# (fgd, the tree before), sampled decode with the best logits, paired in turn; the forward check.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
timeout 200 ./fgd_ids check 2>&1 | tail -1
for mdl in qwen2.5-0.5b llama3.2-1b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for r in 1 2 3 4; do
    for b in fgd_ids fgd; do
      out=$(ALAP_BENCH_SAMPLE=1 ./$b bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
      echo "$mdl $b $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'next token: .*')"
    done
  done
done
