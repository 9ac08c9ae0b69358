#!/bin/bash
# Session 33, device call 3: forward_gpu_device check with the shipped launch (attention as a
# programmatic dependent) over all 90 cases, qwen3's unfused path included (call 2's check hit
# run_forward_h200.sh's 60 s bound after the llama and qwen2 cases).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin timeout 400 bash tests/core/model/run_forward_h200.sh 0 > "$o/fwd.txt" 2>&1
echo "forward rc=$?"
grep -E "^check:|check rc|FAIL" "$o/fwd.txt"
grep -c "^check qwen3" "$o/fwd.txt"
