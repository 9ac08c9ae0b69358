#!/bin/bash
# Session 48, device call 1: the integrated check of main at 72ca511 on the lent GPU, the first run of
# the default tree since session 47 made k8v8's fp16(q·d_v) prefill staging the only form.
# 1. tests/kernels/gpu/run_h200.sh: attn_gpu_test (the default build; session 47's call3.sh), compute-
#    sanitizer memcheck and racecheck, the decode attention bench at 4k-128k.
# 2. tests/kernels/gpu/run_ops_h200.sh: every ops.h kernel against the CPU oracle, sanitizers.
# 3. tests/core/model/run_forward_h200.sh with forward_gpu_device and make_random_model built on the
#    development machine (carried in .dev/s48/gbin): GPU logits against the CPU engine; end to end.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 330 bash tests/kernels/gpu/run_h200.sh --ctx 4096,16384,32768,131072 --no-prefill \
  > "$o/attn.txt" 2>&1
echo "attn rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|max error|memcheck|racecheck" "$o/attn.txt" | head -12
log=$(ls $o/attn/*test*.log 2>/dev/null | head -1)
[ -n "$log" ] && grep "^prefill.*k8v8" "$log" | grep -v "d_v=516" | awk '{print $NF}' | tr -d ')' | sort -g | tail -1 |
  sed 's/^/k8v8 prefill, largest error over its bound: /' && grep "d_v=516" "$log" | head -3
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=120 timeout 200 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -12
OUT=$o/fwd ALAP_DEV_BIN=.dev/s48/gbin ALAP_BENCH_QUICK=1 timeout 150 bash tests/core/model/run_forward_h200.sh 120 > "$o/fwd.txt" 2>&1
echo "forward rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "FAIL|fail|check rc|cases" "$o/fwd.txt" | head -12
(cd $o && tar czf logs.tgz attn ops fwd *.txt 2>/dev/null)
echo "done at $(( $(date +%s) - start )) s"
