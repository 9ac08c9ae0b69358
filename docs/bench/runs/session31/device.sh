#!/bin/bash
# Session 31, one device call: the v16 k8v8 V sum on the H200 host's Xeon (Intel, AVX-512 VNNI and
# AVX-VNNI), then the GPU forward pass against the CPU engine that now runs it.
# Carried: .dev/s31/bin (stripped builds of this tree: kernels_cpu_test, core_model_attention_cpu_test,
# core_model_forward_test, cpu_bench_new, make_random_model, forward_gpu_device; cpu_bench_old from
# 23d05c1) and .dev/s31/models/alap-eval-30m-q8_0.gguf. Output: $OUT/xeon.log, $OUT/fwd/.
set -u
B=.dev/s31/bin
M=.dev/s31/models
o=${OUT:-/tmp/out}
mkdir -p "$o"
exec > "$o/xeon.log" 2>&1
date -u; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core\(s\)|Socket|L3" | cut -c1-120; nproc
for v in avx512vnni avxvnni avx2 scalar; do
  echo "AttnHeads $v: $(ALAP_CPU_VARIANT=$v $B/kernels_cpu_test --gtest_filter='AttnHeads*' 2>&1 | tail -1)"
done
for v in avx512vnni avxvnni avx2; do
  echo "attention_cpu_test $v: $(ALAP_CPU_VARIANT=$v $B/core_model_attention_cpu_test 2>&1 | tail -1)"
  echo "forward_test $v: $(ALAP_CPU_VARIANT=$v $B/core_model_forward_test 2>&1 | tail -1)"
done
mkdir -p /tmp/rm
$B/make_random_model llama3.2-1b q4_k /tmp/rm/llama3.2-1b-q4_k.gguf > /dev/null
attn() {  # variant threads depth model
  for side in old new old new; do
    out=$(ALAP_CPU_VARIANT=$1 $B/cpu_bench_$side -m $4 --cache k8v8 --threads $2 --depth $3 -p 64 --attn-only 2>&1)
    dec=$(echo "$out" | grep '^attention cache' | sed 's/.*: \([0-9.]*\) ms\/token.*/\1/')
    pre=$(echo "$out" | grep '^prefill attention' | sed 's/.*64 tokens \([0-9.]*\) ms.*/\1/')
    echo "attn $1 t$2 d$3 $(basename $4) $side decode_ms $dec prefill64_ms $pre"
  done
}
for v in avx512vnni avxvnni; do
  attn $v 1 4096 $M/alap-eval-30m-q8_0.gguf
  attn $v 4 4096 $M/alap-eval-30m-q8_0.gguf
  attn $v 1 4096 /tmp/rm/llama3.2-1b-q4_k.gguf
done
date -u
exec >> "$o/xeon.log" 2>&1
OUT=$o/fwd ALAP_DEV_BIN=$B ALAP_BENCH_QUICK=1 timeout 240 bash tests/core/model/run_forward_h200.sh 1 > "$o/fwd.txt" 2>&1
echo "forward rc=$?"
grep -E "FAIL|fail|check rc|cases" "$o/fwd.txt" | head -12
date -u
