#!/bin/bash
# Session 28: f16 against k8 cache on the CPU, to choose the default cache mode there.
# cpu_bench on random Llama-3.2-1B and Qwen2.5-0.5B Q4_K files (make_random_model), depths 0, 1024
# and 4096, two threads, AVX-512 and plain AVX2 kernels (by default), runs in the order f16 k8 k8 f16 so
# that both modes see the machine's drift alike. One JSON line a run.
#   BIN=build/default/bin M1=llama.gguf M2=qwen.gguf bash cache_default.sh > cache_default.jsonl
# THREADS (2), VARIANTS ("avx512vnni avx2") and DEPTHS ("0 1024 4096") override the defaults.
set -eu
for variant in ${VARIANTS:-avx512vnni avx2}; do
  for m in "$M1" "$M2"; do
    for depth in ${DEPTHS:-0 1024 4096}; do
      for cache in f16 k8 k8 f16; do
        echo "{\"variant\":\"$variant\",\"file\":\"$(basename "$m")\",\"run\":$(ALAP_CPU_VARIANT=$variant "$BIN/cpu_bench" -m "$m" \
          --threads "${THREADS:-2}" --depth "$depth" --cache "$cache" -p 64 -n 16 --json | tail -1)}"
      done
    done
  done
done
