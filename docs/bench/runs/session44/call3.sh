#!/bin/bash
# Session 44, device call 3: ops_gpu_test with the mended BLAS-choice check (the scratch for a forced
# product sized under "blas"), the refused stand-in BLAS, compute-sanitizer memcheck and racecheck on
# ops_gpu_test --small (the first sanitizer run with a BLAS in the library); then the first prompt
# (cold: no warm-up prefill) with the BLAS default against the int8 kernels, three rounds in turn.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s44c3; mkdir -p $o $w/lib
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  $nvcc -std=c++20 -O3 -arch=sm_90 -Xcompiler=-fPIC -I. -Ikernels/include -x cu -c $src -o $w/lib/$(basename $src .hip).o > $w/lib/$(basename $src .hip).log 2>&1 &
done
( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=200 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log ) &
ops=$!
wait $(jobs -p | grep -v "^$ops$")
$nvcc -shared -arch=sm_90 $w/lib/*.o -o $w/lib/libalap_gpu.so -lcudart > $w/lib/link.log 2>&1
echo "lib + models $(at)"
export LD_LIBRARY_PATH=$w/lib:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$w/lib/libalap_gpu.so
# Cold first prompts while the sanitizers run on the same GPU would be skewed: wait for them.
wait $ops
echo "ops + sanitizers $(at)"; grep -E "rc=|FAIL|PASS|blas" $w/ops_run.log | head -20; cat $w/ops/sanitizers.txt 2>/dev/null
for r in 1 2 3; do
  for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k llama3-8b-q4_k; do
    for pre in kernels auto; do
      [ $(( $(date +%s) - start )) -gt 470 ] && { echo "cut at round $r $model $pre $(at)"; break 3; }
      echo "== round $r $model prefill $pre cold" >> $w/cold.txt
      ALAP_BENCH_WARM=0 ALAP_GPU_PREFILL=$pre ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 40 $d/forward_gpu_device bench $m/$model.gguf 4096 k8 -1 2>&1 | grep -v '^device:' | grep bench >> $w/cold.txt
    done
  done
done
echo "cold done $(at)"
paste -d' ' - - < $w/cold.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ k8 layers [0-9/]+: //; s/\| weights.*scratch/scratch/; s/, device free.*//; s/, decode.*//'
tar czf $o/call3.tgz -C $w --exclude='*.o' --exclude='*.so' .
