#!/bin/bash
# Session 45, device call 1: three same-bits changes to the prefill attention's softmax (attn_prefill_mma.h),
# measured against the shipped kernel in the same call. Builds: "base" = all three off (the shipped kernel),
# "lazy" = O rescaled only in tiles where a row's max moved, "all" = lazy + bare ex2.approx.ftz + the causal
# mask only on tiles that cross a warp's first row (the tree's default). attn_gpu_test on base and all (the
# same errors expected), attn_gpu_bench --prefill-only in alternating rounds, the eval model's perplexity
# (the same values expected), the forward check, Llama-3-8B / Llama-3.2-1B Q4_K prompts at 32k end to end,
# and the SASS instruction counts of the k8 head_dim-128 kernels.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s45c1; mkdir -p $o $w/base $w/lazy $w/all
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
declare -A vf=([base]="-DALAP_PREFILL_LAZY_RESCALE=0 -DALAP_PREFILL_EX2_FTZ=0 -DALAP_PREFILL_MASK_DIAG=0"
               [lazy]="-DALAP_PREFILL_LAZY_RESCALE=1 -DALAP_PREFILL_EX2_FTZ=0 -DALAP_PREFILL_MASK_DIAG=0"
               [all]="")
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  for v in base lazy all; do $nvcc $flags ${vf[$v]} -x cu -c $src -o $w/$v/$n.o > $w/$v/$n.log 2>&1 & done
done
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $w/$t.o > $w/$t.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
wait
for v in base lazy all; do
  $nvcc -shared -arch=sm_90 $w/$v/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1
  for t in attn_gpu_test attn_gpu_bench; do $nvcc -arch=sm_90 $w/$t.o $w/$v/*.o $w/fp16.o -o $w/$v/$t >> $w/$v/link.log 2>&1; done
done
echo "built $(at)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; cat $w/*/link.log | head -5
# SASS of the k8 (fp16 V) head_dim-128 kernels: instructions by opcode.
for v in base all; do
  cuobjdump -sass $w/$v/attn_k8_prefill.o 2>/dev/null | awk '/Function :/{f = ($0 ~ /prefill_mma.*ILb1ELb0ELi128ELi2ELi4E/)} f && /\/\*[0-9a-f]+\*\//{print}' |
    sed -E 's/^ *\/\*[0-9a-f]+\*\/ +(@!?U?P[0-9T] +)?([A-Z0-9_]+)[. ;].*/\2/' | sort | uniq -c | sort -rn > $w/$v/sass_k8_128_2_4.txt
  echo "$v SASS k8 128 WM2 S4: $(awk '{s += $1} END {print s}' $w/$v/sass_k8_128_2_4.txt) instructions; top: $(head -8 $w/$v/sass_k8_128_2_4.txt | tr -s ' ' | tr '\n' ';')"
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for v in base all; do
  $w/$v/attn_gpu_test > $w/$v/attn_test.log 2>&1; echo "$v attn_gpu_test rc=$? $(tail -1 $w/$v/attn_test.log)"
  grep -E "^prefill" $w/$v/attn_test.log | md5sum | sed "s/^/$v prefill lines md5 /"
done
diff <(grep -E "^prefill" $w/base/attn_test.log) <(grep -E "^prefill" $w/all/attn_test.log) > $w/attn_test_diff.txt && echo "attn_gpu_test prefill lines identical" || echo "attn_gpu_test prefill lines differ: $(wc -l < $w/attn_test_diff.txt) diff lines"
echo "attn tests $(at)"
for r in 1 2; do for v in base lazy all; do
  echo "== $v round $r" >> $w/attn_bench.txt; $w/$v/attn_gpu_bench --prefill-only >> $w/attn_bench.txt 2>&1
done; done
echo "attn bench $(at)"
python3 - $w/attn_bench.txt <<'PY' | tee $w/attn_table.md
import re, sys, collections
cur = None; d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r'== (\w+) round', l)
    if m: cur = m.group(1); continue
    m = re.match(r'prefill (\S+)\s+(\S+)\s+n_q=\s*(\d+) pos0=\s*(\d+):.*best scalar [\d.]+ new ([\d.]+) us', l)
    if m: d[m.group(1, 2, 3, 4)][cur].append(float(m.group(5)))
print("| mode | model | n_q | pos0 | base µs | lazy µs | all µs | lazy/base | all/base |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for k, v in d.items():
    a, b, c = min(v['base']), min(v['lazy']), min(v['all'])
    print(f"| {' | '.join(k)} | {a:.1f} | {b:.1f} | {c:.1f} | {b / a:.3f} | {c / a:.3f} |")
PY
mm=.dev/s43/models
for v in base all; do for lang in en bn; do for mode in k8 k8v8; do
  ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so timeout 40 $d/forward_gpu_device ppl $mm/alap-eval-30m-q4_k_m.gguf $mm/ids_$lang.txt 512 40 $mode 2>&1 | grep "^ppl" | sed "s/^/$v $lang /" >> $w/ppl.txt
done; done; done
echo "ppl $(at)"; sed -E 's#\.dev/s43/models/##' $w/ppl.txt
ALAP_GPU_LIBRARY=$w/all/libalap_gpu.so timeout 120 $d/forward_gpu_device check > $w/all/check.txt 2>&1
echo "all check $(at): $(tail -1 $w/all/check.txt)"; grep FAIL $w/all/check.txt | head -3
for r in 1 2; do for v in base all; do
  for spec in "llama3-8b-q4_k 32768 f16" "llama3-8b-q4_k 32768 k8" "llama3-8b-q4_k 32768 k8v8" "llama3.2-1b-q4_k 32768 k8"; do
    [ $(( $(date +%s) - start )) -gt 420 ] && { echo "e2e cut at round $r $v $spec $(at)"; break 3; }
    set -- $spec
    echo "== $v round $r $1 $2 $3" >> $w/e2e.txt
    ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench $m/$1.gguf $2 $3 -1 2>&1 | grep "^bench" >> $w/e2e.txt
  done
done; done
echo "e2e $(at)"
paste -d' ' - - < $w/e2e.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ [a-z0-9]+ layers [0-9/]+: //; s/, decode.*//'
tar czf $o/call1.tgz -C $w --exclude='*.o' --exclude='*.so' --exclude=attn_gpu_test --exclude=attn_gpu_bench .
echo "done $(at)"
