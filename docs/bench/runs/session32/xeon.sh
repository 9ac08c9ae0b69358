#!/bin/bash
# Session 32, one device call (CPU only): the decode split by KV groups on the H200 host's Xeon.
# Carried: .dev/s32/bin (serial_old: harness on the libraries before 93681f4, serial_new: at it;
# the two test binaries; make_random_model) and .dev/s32/models (eval Q4_K_M). Output: $OUT/xeon.log.
set -u
B=.dev/s32/bin
o=${OUT:-/tmp/out}
mkdir -p "$o"
exec > "$o/xeon.log" 2>&1
date -u; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core\(s\)|Socket|L3" | cut -c1-120; nproc
for v in avx512vnni avxvnni avx2; do
  echo "forward_test $v: $(ALAP_CPU_VARIANT=$v $B/core_model_forward_test 2>&1 | tail -1)"
  echo "attention_cpu_test $v: $(ALAP_CPU_VARIANT=$v $B/core_model_attention_cpu_test 2>&1 | tail -1)"
done
mkdir -p /tmp/rm
$B/make_random_model llama3.2-1b q4_k /tmp/rm/llama.gguf > /dev/null
$B/make_random_model qwen2.5-0.5b q4_k /tmp/rm/qwen.gguf > /dev/null
ab() {  # model threads depth tokens rounds: old/new alternating, median token us
  for r in 1 2 3 4; do
    a=$($B/serial_old $1 $2 $4 $5 $3 | awk '{print $2}'); b=$($B/serial_new $1 $2 $4 $5 $3 | awk '{print $2}')
    echo "ab $(basename $1) t$2 d$3 old $a new $b ratio $(awk -v a=$a -v b=$b 'BEGIN{printf "%.3f", b/a}')"
  done
}
for d in 64 1024; do
  ab .dev/s32/models/alap-eval-30m-q4_k_m.gguf 2 $d 100 3
  ab .dev/s32/models/alap-eval-30m-q4_k_m.gguf 4 $d 100 3  # 2 KV groups, 4 threads: both builds split alike
done
date -u
for t in 2 4 8; do ab /tmp/rm/llama.gguf $t 64 20 2; done
ab /tmp/rm/qwen.gguf 2 64 20 2
date -u
ab /tmp/rm/llama.gguf 8 1024 20 1
date -u
