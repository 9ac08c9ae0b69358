#!/bin/bash
# Session 62, device call 1: decode attention with the tiles' cp.async asking L2 for 128- or 256-byte
# sector prefetches (ALAP_ATTN_L2PF), against the shipped kernels; the variants' correctness test,
# then the three builds benched in turn, three rounds, at 16k and 32k.
set -u -o pipefail
final=${OUT:-/tmp/out}
o=/tmp/s62call1
mkdir -p "$o" "$final"
start=$(date +%s)
OUT=$o/attn ALAP_SKIP_SAN=1 ALAP_VARIANT="-DALAP_ATTN_L2PF=128;-DALAP_ATTN_L2PF=256" ALAP_VARIANT_CTX=16384,32768 \
  timeout 300 bash tests/kernels/gpu/run_h200.sh --ctx 16384,32768 --no-prefill --reps 30 > "$o/attn.txt" 2>&1
echo "attn rc=$? (at $(( $(date +%s) - start )) s)"
grep -E "rc=|PASS|FAIL|max error|== variant|build took" "$o/attn.txt" | head -20
for r in 1 2 3; do
  for bin in attn_gpu_bench bench_var0 bench_var1; do
    echo "== round $r $bin"
    /tmp/alap/$bin --ctx 16384,32768 --no-prefill --reps 30 --no-copy 2>&1 | grep -vE "^(device|geometry)"
  done
done > "$o/rounds.txt" 2>&1
echo "rounds done at $(( $(date +%s) - start )) s"
cp "$o/attn.txt" "$o/rounds.txt" "$final/" 2>/dev/null
cp "$o/attn/bench_variants.log" "$o/attn/bench.log" "$o/attn/machine.txt" "$final/" 2>/dev/null
grep -h "SASS" "$o/attn/build.log" | head -3 > "$final/sass.txt"
