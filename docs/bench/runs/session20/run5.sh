#!/bin/bash
# session 20 device call 5: the CPU kernels after the ISA files' scratch moved to thread_scratch
# (8775092), on the H200 host's Xeon: every variant's kernel tests, and the forward and attention
# tests with each SIMD variant forced.
cd "$(dirname "$0")"
date -u
grep -o -w 'avx512vnni\|avx_vnni\|avx512bw' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
./kernels_cpu_test 2>&1 | tail -1
for v in avx512vnni avxvnni avx2; do
  echo "$v: forward $(ALAP_CPU_VARIANT=$v ./core_model_forward_test 2>&1 | tail -1) | attention $(ALAP_CPU_VARIANT=$v ./core_model_attention_cpu_test 2>&1 | tail -1)"
done
date -u
