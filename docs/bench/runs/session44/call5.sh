#!/bin/bash
# Session 44, device call 5: the 32k rows with the shipped prefill (P in fp16, 294a1b8) against
# the hi + lo build (-DALAP_PREFILL_P_LO=1), in the same call: random Qwen2.5-0.5B and Llama-3.2-1B in
# Q4_K and Q8_0 and Llama-3-8B Q4_K, f16 / k8 / k8v8, prompt to 32512 in batches of 2048, 64 decode
# steps with the app's sampler; builds alternating row by row.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s44c5; mkdir -p $o $w/new $w/lo
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "qwen2.5-0.5b q8_0" "llama3.2-1b q4_k" "llama3.2-1b q8_0" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  $nvcc $flags -x cu -c $src -o $w/new/$n.o > $w/new/$n.log 2>&1 &
  $nvcc $flags -DALAP_PREFILL_P_LO=1 -x cu -c $src -o $w/lo/$n.o > $w/lo/$n.log 2>&1 &
done
wait
for v in new lo; do $nvcc -shared -arch=sm_90 $w/$v/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1; done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $w/machine.txt 2>&1
echo "built $(at)"; cat $w/machine.txt
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for model in qwen2.5-0.5b-q4_k qwen2.5-0.5b-q8_0 llama3.2-1b-q4_k llama3.2-1b-q8_0 llama3-8b-q4_k; do
  for mode in f16 k8 k8v8; do
    for v in new lo; do
      [ $(( $(date +%s) - start )) -gt 260 ] && { echo "cut at $model $mode $v $(at)"; break 3; }
      echo "[$v]" >> $w/e2e_$v.log
      ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench $m/$model.gguf 32768 $mode -1 2>&1 | grep -v '^device:' >> $w/e2e_$v.log
    done
  done
done
echo "e2e $(at)"
for v in new lo; do echo "== $v"; python3 docs/bench/runs/session43/e2e_table.py $w/e2e_$v.log; done | tee $w/tables.md
tar czf $o/call5.tgz -C $w --exclude='*.o' --exclude='*.so' .
