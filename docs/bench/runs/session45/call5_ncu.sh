#!/bin/bash
# ncu of the prefill mma kernels: list launches, then profile the largest-grid launch of each variant.
b=/tmp/s45c2/all/attn_gpu_bench; export LD_LIBRARY_PATH=/usr/local/cuda/lib64
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in ".bool.1, .bool.0, .int.128" ".bool.1, .bool.1, .int.128" ".bool.0, .bool.0, .int.128"; do
  tag=$(echo "$k" | tr -d " ,.a-z")
  timeout 150 $ncu --kernel-name-base demangled --kernel-name regex:"attn_prefill_mma_kernel<$k" --launch-count 400 --metrics gpu__time_duration.sum,launch__grid_size --csv $b --prefill-only > $OUT/list_$tag.csv 2> $OUT/list_$tag.err
  idx=$(python3 - $OUT/list_$tag.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; ids = {}; grid = {}
for r in rows[1:]:
    d = dict(zip(h, r)); i = int(d['ID'])
    if d['Metric Name'] == 'launch__grid_size': grid[i] = float(d['Metric Value'].replace(',', ''))
best = max(grid.values()); print(min(i for i, g in grid.items() if g == best))
PY
)
  echo "$tag: largest grid first at launch $idx"
  timeout 150 $ncu --kernel-name-base demangled --kernel-name regex:"attn_prefill_mma_kernel<$k" --launch-skip $idx --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis $b --prefill-only > $OUT/ncu_$tag.txt 2>&1
  grep -E "attn_prefill_mma_kernel<|Duration|Grid Size|Block Size|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Ipc|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Executed Instructions  |Compute \(SM\) Throughput|Memory Throughput|Block Limit|Stall" $OUT/ncu_$tag.txt | head -30
done
