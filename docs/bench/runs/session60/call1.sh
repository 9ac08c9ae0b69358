#!/bin/bash
# Session 60, device call 1: the integrated check of main (session 60: the CPU forward pass's rows on
# cache lines, the prefill tiles' interleave) on the lent GPU, the first GPU run since session 48.
# 1. tests/kernels/gpu/run_h200.sh: attn_gpu_test (the default build), compute-
#    sanitizer memcheck and racecheck, the decode attention bench at 4k-128k.
# 2. tests/kernels/gpu/run_ops_h200.sh: every ops.h kernel against the CPU oracle, sanitizers.
# 3. tests/core/model/run_forward_h200.sh with forward_gpu_device and make_random_model built on the
#    development machine (carried in .dev/s60/gbin): GPU logits against the CPU engine; end to end.
set -u -o pipefail
final=${OUT:-/tmp/out}
o=/tmp/s60call1  # the logs; $OUT gets the summaries and one archive (at most 8 files come back)
mkdir -p "$o" "$final"
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
OUT=$o/fwd ALAP_DEV_BIN=.dev/s60/gbin ALAP_BENCH_QUICK=1 timeout 150 bash tests/core/model/run_forward_h200.sh 120 > "$o/fwd.txt" 2>&1
echo "forward rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "FAIL|fail|check rc|cases" "$o/fwd.txt" | head -12
(cd $o && tar czf "$final/logs.tgz" attn ops fwd *.txt 2>/dev/null)
cp $o/*.txt "$final/" 2>/dev/null
echo "done at $(( $(date +%s) - start )) s"
