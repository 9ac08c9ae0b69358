#!/bin/bash
# Session 35, device call 8: the split plan moved into kernels/gpu/attn_splits.h (the same
# arithmetic, now also checked on the host): attn_gpu_test and the attention bench at 32k.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
OUT=$o/attn ALAP_SKIP_SAN=1 ALAP_SAN_TIMEOUT=1 timeout 200 bash tests/kernels/gpu/run_h200.sh --ctx 32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$?"
grep -E "PASS|FAIL|failure|max error|ctx  32768" "$o/attn.txt" | head -8
