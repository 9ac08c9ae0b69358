#!/bin/bash
# Session 36, device call 8: where the int8 prefill product kernel spends its time. ncu (clocks as
# found) on matmul_q8_mma_kernel<Q4_K, 128> at 512 tokens, HEAD's library: the 4096 × 4096 product
# and the 14336 × 4096 one of `ops_gpu_test --bench-prefill` (ALAP_BENCH_PREFILL=types: the
# 8B shapes of every type at 512 tokens; the filter keeps Q4_K MR 128 launches, 22 of them a shape).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
d=.dev/s36/mb
[ -f $d/base/libalap_gpu.so ] || gunzip -k $d/base/libalap_gpu.so.gz
export LD_LIBRARY_PATH=$PWD/$d/base:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for skip in 0 22; do
  ALAP_BENCH_PREFILL=types ALAP_TEST_TYPES=q4_K timeout 240 $ncu --clock-control none --kernel-name-base mangled \
    --kernel-name regex:mma_kernelILj12ELi128E --launch-skip $skip --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
    $d/ops_gpu_test --bench-prefill > "$o/ncu_skip$skip.txt" 2>&1
  echo "ncu skip $skip rc=$?"
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc A|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Stall|pipe|Pipe" "$o/ncu_skip$skip.txt" | head -40
done
