#!/bin/bash
# Session 48, device call 2: call1.sh's step 2 again, after run_ops_h200.sh learned the sse4 folder's
# flags (its hand-written CPU-oracle build had compiled kernels/cpu/sse4 without them and failed).
o=$OUT/ops; mkdir -p $o; OUT=$o ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=120 timeout 250 bash tests/kernels/gpu/run_ops_h200.sh > $OUT/ops.txt 2>&1; echo "ops rc=$?"; grep -E "rc=|PASS|FAIL|memcheck|racecheck" $OUT/ops.txt | head -12; (cd $OUT && tar czf logs.tgz ops ops.txt)
