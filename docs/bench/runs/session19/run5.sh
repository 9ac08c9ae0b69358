#!/bin/bash
# session 19 device call 5: gpu_logits_top v4 (the merge stages the lengths first) against v3 and v2;
# checks, sanitizers, device time; decode with the sampler, best logits vs whole rows.
cd "$(dirname "$0")"
date -u
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
./ops_gpu_test --top 2>&1 | tail -1
S=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 $S --tool memcheck ./ops_gpu_test --top 2>&1 | tail -2
timeout 120 $S --tool racecheck ./ops_gpu_test --top 2>&1 | tail -2
timeout 120 $S --tool synccheck ./ops_gpu_test --top 2>&1 | tail -2
for r in 1 2; do
  for v in . v3 v2; do echo "$v:"; LD_LIBRARY_PATH=$PWD/$v ./ops_gpu_test --bench-top 2>&1 | grep logits_top; done
done
timeout 200 ./ops_gpu_test 2>&1 | tail -1
timeout 200 ./fgd check 2>&1 | tail -1
date -u
for mdl in qwen2.5-0.5b llama3.2-1b llama3.2-3b; do
  ./make_random_model $mdl q4_k /tmp/$mdl.gguf > /dev/null
  for r in 1 2 3; do
    for t in 1 0; do
      out=$(ALAP_GPU_TOP=$t ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
      echo "$mdl top=$t $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'next token: .*')"
    done
  done
  for t in 1 0; do
    out=$(ALAP_BENCH_PENALTY=1 ALAP_GPU_TOP=$t ALAP_BENCH_SAMPLE=1 ./fgd bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
    echo "$mdl penalty top=$t $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'next token: .*')"
  done
  out=$(./fgd bench /tmp/$mdl.gguf 4096 k8 -1 nofill 2>&1)
  echo "$mdl argmax $(echo "$out" | grep -o 'decode [0-9.]* tok/s') | $(echo "$out" | grep -o 'decode host cost: .*')"
done
date -u
