#!/bin/bash
# Session 33, device call 5: the end-to-end table of issue 6 on the shipped tree (after f731967):
# tests/core/model/run_forward_h200.sh's full bench (Qwen2.5-0.5B and Llama-3.2-1B shapes in Q4_K and
# Q8_0; 4k with a real prefill, graphs and plain launches; 32k decode; f16 and k8; the meter's MiB).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin timeout 560 bash tests/core/model/run_forward_h200.sh 420 > "$o/fwd.txt" 2>&1
echo "forward rc=$?"
grep -E "^check:|skipped" "$o/fwd.txt" | head
grep -E "^bench " "$o/fwd/bench.log" | sed -E 's/^bench \/tmp\/alap-fwd\///' | cut -c1-160
