#!/bin/sh
# Packed f16 prefill: the panel converted once (1c05c4a, PANEL) against the runs read and converted
# in the tiles (3581665, DIRECT), prefill_repeat builds of each (runs/session28/prefill_repeat.cpp,
# MODEL THREADS TOKENS REPS: median and best ms a prompt), in turn, four rounds.
# Usage: ab_direct.sh PANEL_BIN DIRECT_BIN EVAL_F16 QWEN_F16 LLAMA_F16
panel=$1 direct=$2 eval=$3 qwen=$4 llama=$5
for round in 1 2 3 4; do
  for m in "$eval 64 300" "$qwen 128 6" "$llama 64 3"; do
    set -- $m
    for t in 1 2; do
      for b in panel direct; do
        bin=$panel; [ $b = direct ] && bin=$direct
        printf 'round %s %s %s t%s: ' "$round" "$b" "$(basename "$1")" "$t"
        "$bin" "$1" "$t" "$2" "$3"
      done
    done
  done
done
