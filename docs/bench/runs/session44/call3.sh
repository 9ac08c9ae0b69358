#!/bin/bash
# Session 44, device call 3. (1) ops_gpu_test with the mended BLAS-choice check, the refused stand-in
# BLAS. (2) Prefill attention with P as its fp16 hi half alone (-DALAP_PREFILL_P_LO=0: half the P·V
# mma) against the shipped hi + lo (at 8e344be, where the default was 1; since 294a1b8 the default is 0,
# so the "base" build here must set -DALAP_PREFILL_P_LO=1 to repeat the comparison): attn_gpu_test's errors, attn_gpu_bench --prefill-only, end to end
# at 32k (random Llama-3-8B / Llama-3.2-1B Q4_K), the eval model's perplexity CPU against GPU, the
# forward check. (3) The first prompt (cold) with the BLAS default against the int8 kernels.
# (4) compute-sanitizer on ops_gpu_test --small (the first run with a BLAS in the library), if time.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s44c3; mkdir -p $o $w/base $w/var
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  $nvcc $flags -x cu -c $src -o $w/base/$n.o > $w/base/$n.log 2>&1 &
  $nvcc $flags -DALAP_PREFILL_P_LO=0 -x cu -c $src -o $w/var/$n.o > $w/var/$n.log 2>&1 &
done
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $w/$t.o > $w/$t.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log ) &
wait
for v in base var; do
  $nvcc -shared -arch=sm_90 $w/$v/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1
  for t in attn_gpu_test attn_gpu_bench; do $nvcc -arch=sm_90 $w/$t.o $w/$v/*.o $w/fp16.o -o $w/$v/$t >> $w/$v/link.log 2>&1; done
done
echo "built $(at)"; cat $w/*/link.log | head -5
grep -E "rc=|FAIL|PASS|blas" $w/ops_run.log | head -12
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for v in base var; do
  $w/$v/attn_gpu_test > $w/$v/attn_test.log 2>&1; echo "$v attn_gpu_test rc=$? $(tail -1 $w/$v/attn_test.log)"
  grep -E "^prefill" $w/$v/attn_test.log | awk -v v=$v '{e = $NF + 0; if (e > mx[$(NF-1)]) mx[$(NF-1)] = e} END {for (k in mx) printf "%s prefill max error %s %.2e\n", v, k, mx[k]}'
done
$nvcc -arch=sm_90 /tmp/alap-ops/ops_gpu_test.o $w/var/*.o /tmp/alap-ops/cpu_*.o -lpthread -o $w/var/ops_gpu_test > $w/var/ops_link.log 2>&1 &&
  { $w/var/ops_gpu_test > $w/var/ops_test.log 2>&1; echo "var ops_gpu_test rc=$? $(tail -1 $w/var/ops_test.log)"; grep -E "attn_f16_prefill" $w/var/ops_test.log /tmp/s44c3/ops/test.log; }
echo "attn tests $(at)"
for r in 1 2; do for v in base var; do
  echo "== $v round $r" >> $w/attn_bench.txt; $w/$v/attn_gpu_bench --prefill-only >> $w/attn_bench.txt 2>&1
done; done
echo "attn bench $(at)"
for r in 1 2; do for v in base var; do
  for spec in "llama3-8b-q4_k 32768 f16" "llama3-8b-q4_k 32768 k8" "llama3-8b-q4_k 32768 k8v8" "llama3-8b-q4_k 4096 k8" "llama3.2-1b-q4_k 32768 k8"; do
    set -- $spec
    echo "== $v round $r $1 $2 $3" >> $w/e2e.txt
    ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench $m/$1.gguf $2 $3 -1 2>&1 | grep "^bench" >> $w/e2e.txt
  done
done; done
echo "e2e $(at)"
paste -d' ' - - < $w/e2e.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ [a-z0-9]+ layers [0-9/]+: //; s/, decode.*//'
mm=.dev/s43/models
for v in base var; do for lang in en bn; do
  ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so timeout 40 $d/forward_gpu_device ppl $mm/alap-eval-30m-q4_k_m.gguf $mm/ids_$lang.txt 512 40 k8 2>&1 | grep "^ppl" | sed "s/^/$v $lang /" >> $w/ppl.txt
  ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so timeout 40 $d/forward_gpu_device ppl $mm/alap-eval-30m-q4_k_m.gguf $mm/ids_$lang.txt 512 40 k8v8 2>&1 | grep "^ppl" | sed "s/^/$v $lang /" >> $w/ppl.txt
done; done
echo "ppl $(at)"; sed -E 's#\.dev/s43/models/##' $w/ppl.txt
ALAP_GPU_LIBRARY=$w/var/libalap_gpu.so timeout 120 $d/forward_gpu_device check > $w/var/check.txt 2>&1
echo "var check $(at): $(tail -1 $w/var/check.txt)"; grep FAIL $w/var/check.txt | head -3
export ALAP_GPU_LIBRARY=$w/base/libalap_gpu.so
for r in 1 2; do
  for model in llama3.2-1b-q4_k llama3-8b-q4_k; do
    for pre in kernels auto; do
      [ $(( $(date +%s) - start )) -gt 470 ] && { echo "cold cut at round $r $model $pre $(at)"; break 3; }
      echo "== round $r $model prefill $pre cold" >> $w/cold.txt
      ALAP_BENCH_WARM=0 ALAP_GPU_PREFILL=$pre ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 40 $d/forward_gpu_device bench $m/$model.gguf 4096 k8 -1 2>&1 | grep "^bench" >> $w/cold.txt
    done
  done
done
echo "cold $(at)"
paste -d' ' - - < $w/cold.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ k8 layers [0-9/]+: //; s/, decode.*//'
if [ $(( $(date +%s) - start )) -lt 420 ]; then
  for tool in memcheck racecheck; do
    timeout 70 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 /tmp/alap-ops/ops_gpu_test --small > $w/san_$tool.log 2>&1
    echo "ops_gpu_test --small $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' $w/san_$tool.log | head -3 | tr '\n' ' ')"
  done
fi
tar czf $o/call3.tgz -C $w --exclude='*.o' --exclude='*.so' --exclude='attn_gpu_test' --exclude='attn_gpu_bench' .
echo "done $(at)"
