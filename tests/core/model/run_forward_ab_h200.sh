#!/bin/bash
# End-to-end decode of two builds of the GPU forward pass in one device session, alternating
# (A B A B per case), on random-weight models of Qwen2.5-0.5B and Llama-3.2-1B shape (Q4_K) at 4k
# and 32k context, f16 and k8 caches; then the B build's ops_gpu_test and forward check.
# Each build is a folder of carried binaries: forward_gpu_device, make_random_model, ops_gpu_test
# and its libalap_gpu.so. Logs go to $OUT (bench.log: one line per run, tagged A or B).
# Usage from the repo root: bash tests/core/model/run_forward_ab_h200.sh DIR_A DIR_B [repeats, default 2]
set -u -o pipefail
out=${OUT:-h200-out}
a=$1 b=$2 reps=${3:-2}
m=/tmp/alap-ab
mkdir -p "$out" "$m"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/machine.txt"
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k"; do
  set -- $spec
  "$b/make_random_model" "$1" "$2" "$m/$1-$2.gguf" > "$m/$1-$2.log" 2>&1 &
done
echo "== ops_gpu_test (B)"
ALAP_GPU_LIBRARY=$PWD/$b/libalap_gpu.so timeout 60 "$b/ops_gpu_test" 2>&1 | tail -4 | tee "$out/ops.log"
echo "== forward check (B)"
ALAP_GPU_LIBRARY=$PWD/$b/libalap_gpu.so timeout 90 "$b/forward_gpu_device" check 2>&1 | tee "$out/check.log" | tail -3
wait
echo "== bench"
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
  for ctx in 4096 32768; do
    for mode in f16 k8; do
      how=""
      [ "$ctx" = 32768 ] && how=nofill
      for r in $(seq "$reps"); do
        for side in A B; do
          dir=$a
          [ "$side" = B ] && dir=$b
          line=$(ALAP_GPU_LIBRARY=$PWD/$dir/libalap_gpu.so timeout 60 "$dir/forward_gpu_device" bench "$m/$model.gguf" \
                   "$ctx" "$mode" -1 $how 2>&1 | grep -E 'decode [0-9.]+ tok/s' | head -1)
          echo "$side $model $ctx $mode: $(echo "$line" | grep -oE 'decode [0-9.]+ tok/s')" | tee -a "$out/bench.log"
        done
      done
    done
  done
done
grep -E "FAIL|failure" "$out/ops.log" "$out/check.log"
