#!/bin/bash
# alternating old/new prefill timings: model threads reps rounds
S=/work/shared/models
run() { m=$1; th=$2; reps=$3; rounds=$4
  for r in $(seq $rounds); do for tag in old new; do
    echo "$(basename $m) thr=$th $tag $(/tmp/s55/pd_$tag $m $th 128 $reps 0 k8)"; done; done; }
run /tmp/rm/qwen2.5-0.5b-q8_0.gguf 2 8 4
run /tmp/rm/qwen2.5-0.5b-q4_k.gguf 2 8 4
run /tmp/rm/llama3.2-1b-q4_k.gguf 2 5 4
run $S/alap-eval-30m-q8_0.gguf 2 40 4
run $S/alap-eval-30m-q4_k_m.gguf 2 40 4
run $S/alap-eval-30m-f16.gguf 1 30 4
run /tmp/rm/qwen2.5-0.5b-q8_0.gguf 1 6 3
