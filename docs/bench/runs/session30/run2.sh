#!/bin/bash
# Session 30, device call 2: the GPU pieces of main after 0a0645b on the lent H200.
# 1. tests/kernels/gpu/run_h200.sh: attn_gpu_test, compute-sanitizer memcheck and racecheck, and the
#    decode bench. The scalar decode body's stage layout was rewritten in 879c64a (session 29's
#    second read) after that session's last device call, so this is its first run on the device.
# 2. tests/kernels/gpu/run_ops_h200.sh: every ops.h kernel against the CPU oracle, sanitizers.
# 3. tests/core/model/run_forward_h200.sh with forward_gpu_device and make_random_model built on the
#    development machine (carried in .dev/s30/gbin): logits of the GPU forward pass against the CPU
#    engine, whose prefill (also the CPU layers of a partial offload) may now split by tokens.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 330 bash tests/kernels/gpu/run_h200.sh --ctx 4096,16384,32768,131072 --no-prefill \
  > "$o/attn.txt" 2>&1
echo "attn rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|max error|memcheck|racecheck" "$o/attn.txt" | head -12
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=120 timeout 200 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -12
OUT=$o/fwd ALAP_DEV_BIN=.dev/s30/gbin ALAP_BENCH_QUICK=1 timeout 150 bash tests/core/model/run_forward_h200.sh 120 > "$o/fwd.txt" 2>&1
echo "forward rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "FAIL|fail|check rc|cases" "$o/fwd.txt" | head -12
echo "done at $(( $(date +%s) - start )) s"
