#!/bin/bash
# Session 43, device call 1: the BLAS layer with its self-check (cuBLAS); BLAS by default end to end,
# end-to-end prefill, default against ALAP_GPU_PREFILL=kernels, warm and cold.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s43; mkdir -p $o $w
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
grep -n "kBlasByDefault =" kernels/gpu/matmul_blas.hip
mkdir -p $w/lib
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  $nvcc -std=c++20 -O3 -arch=sm_90 -Xcompiler=-fPIC -I. -Ikernels/include -x cu -c $src -o $w/lib/$(basename $src .hip).o > $w/lib/$(basename $src .hip).log 2>&1 &
done
( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log ) &
wait
$nvcc -shared -arch=sm_90 $w/lib/*.o -o $w/lib/libalap_gpu.so -lcudart > $w/lib/link.log 2>&1
echo "lib + ops done $(at)"; grep -E "PASS|FAIL|rc=|matmul|blas" $w/ops/test.log $w/ops_run.log | head -12
export LD_LIBRARY_PATH=$w/lib:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$w/lib/libalap_gpu.so
timeout 170 $d/forward_gpu_device check > $w/check.txt 2>&1 &
ALAP_GPU_PREFILL=blas timeout 170 $d/forward_gpu_device check > $w/check_blas.txt 2>&1 &
wait
echo "checks $(at): $(tail -1 $w/check.txt) | blas: $(tail -1 $w/check_blas.txt)"; grep FAIL $w/check*.txt | head -5
# A real model on real text: the eval model's perplexity, CPU against GPU, int8 kernels against forced BLAS.
mm=.dev/s43/models
for model in q4_k_m; do
  for lang in en bn; do
    for pre in kernels blas; do
      ALAP_GPU_PREFILL=$pre timeout 40 $d/forward_gpu_device ppl $mm/alap-eval-30m-$model.gguf $mm/ids_$lang.txt 512 40 k8 2>&1 | grep "^ppl" | sed "s/^/$lang /" >> $w/ppl.txt
    done
  done
done
echo "ppl done $(at)"; sed -E 's#\.dev/s43/models/##' $w/ppl.txt
for spec in "qwen2.5-0.5b-q4_k 4096 512" "llama3.2-1b-q4_k 4096 512" "llama3-8b-q4_k 4096 512" "qwen2.5-0.5b-q4_k 4096 2048" "llama3.2-1b-q4_k 4096 2048" "llama3-8b-q4_k 4096 2048" "llama3-8b-q4_k 32768 2048"; do
  set -- $spec
  for v in "kernels 1" "auto 1" "auto 0"; do
    set -- $spec $v
    [ $(( $(date +%s) - start )) -gt 330 ] && { echo "e2e cut at $spec $v $(at)"; break 2; }
    echo "== $1 ctx $2 chunk $3 prefill $4 warm $5" >> $w/e2e.txt
    ALAP_BENCH_WARM=$5 ALAP_GPU_PREFILL=$4 ALAP_BENCH_CHUNK=$3 ALAP_BENCH_SAMPLE=1 timeout 40 $d/forward_gpu_device bench $m/$1.gguf $2 k8 -1 2>&1 | grep -v '^device:' | grep bench >> $w/e2e.txt
  done
done
echo "e2e done $(at)"
paste -d' ' - - < $w/e2e.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ k8 layers [0-9/]+: //; s/\| weights.*scratch/scratch/; s/, device free.*//'
tar czf $o/call1.tgz -C $w --exclude='*.o' .
