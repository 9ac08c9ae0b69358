#!/bin/bash
# Session 28: the AVX-512 activation quantiser and SwiGLU gate, old against new in one run.
# Builds the three measuring programs of this folder against two trees' libraries:
#   OLD=<build dir of the parent commit> NEW=<build dir of the commit> bash ab.sh > ab.log
# (each build dir: cmake --preset default -B DIR && ninja -C DIR alap_core_model alap_kernels).
# Alternates old and new: prefill of 64 tokens (300 repeats, median), decode after a 64-token
# prompt (200 tokens x 5 rounds, median), eval model Q8_0 and Q4_K_M, 1 and 2 threads.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
models=${MODELS:-$root/../shared/models}
for side in OLD NEW; do
  B=${!side}
  L="$B/core/model/libalap_core_model.a $B/core/gguf/libalap_core_gguf.a $B/core/runtime/libalap_core_runtime.a -ldl $B/kernels/cpu/libalap_kernels.a -lpthread"
  for p in prefill_repeat decode_repeat elementwise; do
    c++ -O3 -std=c++20 -I"$root" -I"$root/kernels/include" "$here/$p.cpp" -o "/tmp/s28_${p}_$side" $L
  done
done
for side in OLD NEW OLD NEW; do echo "$side: $(/tmp/s28_elementwise_$side | tr '\n' ' ')"; done
for m in q8_0 q4_k_m; do
  for t in 1 2; do
    for r in 1 2 3; do
      for side in OLD NEW; do
        echo "$m threads $t $side prefill: $(/tmp/s28_prefill_repeat_$side "$models/alap-eval-30m-$m.gguf" $t 64 300)"
        echo "$m threads $t $side $(/tmp/s28_decode_repeat_$side "$models/alap-eval-30m-$m.gguf" $t 200 5)"
      done
    done
  done
done
