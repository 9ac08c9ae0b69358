#!/bin/bash
# Session 43, device call 2: the end-to-end table with the tree's library (BLAS prefill by
# default): random-weight Qwen2.5-0.5B and Llama-3.2-1B in Q4_K and Q8_0 (and Llama-3-8B Q4_K),
# contexts 4096 and 32768, caches f16, k8 and k8v8; a real prefill to CTX − 256 in the engine's
# batches of 2048, then 64 decode steps with the app's sampler. As session 37's run4.sh, with the
# library built here from the tree. Two rounds (the second skipped past 400 s).
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s43c2; mkdir -p $o $w/lib
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "qwen2.5-0.5b q8_0" "llama3.2-1b q4_k" "llama3.2-1b q8_0" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  $nvcc -std=c++20 -O3 -arch=sm_90 -Xcompiler=-fPIC -I. -Ikernels/include -x cu -c $src -o $w/lib/$(basename $src .hip).o > $w/lib/$(basename $src .hip).log 2>&1 &
done
wait
$nvcc -shared -arch=sm_90 $w/lib/*.o -o $w/lib/libalap_gpu.so -lcudart > $w/lib/link.log 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $w/machine.txt 2>&1
echo "lib + models $(at)"; cat $w/machine.txt
export LD_LIBRARY_PATH=$w/lib:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$w/lib/libalap_gpu.so
b=$w/e2e.log; : > $b
for r in 1 2; do
  [ $r = 2 ] && [ $(( $(date +%s) - start )) -gt 400 ] && { echo "round 2 skipped $(at)"; break; }
  for model in qwen2.5-0.5b-q4_k qwen2.5-0.5b-q8_0 llama3.2-1b-q4_k llama3.2-1b-q8_0 llama3-8b-q4_k; do
    for ctx in 4096 32768; do
      for mode in f16 k8 k8v8; do
        echo "[round $r]" >> $b
        ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench "$m/$model.gguf" $ctx $mode -1 2>&1 |
          grep -v '^device:' >> $b
      done
    done
  done
  echo "round $r $(at)"
done
python3 docs/bench/runs/session43/e2e_table.py $b | tee $w/table.md
tar czf $o/call2.tgz -C $w --exclude='*.o' --exclude='*.so' .
echo "done $(at)"
