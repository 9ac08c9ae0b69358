#!/bin/bash
# Session 44, device call 6: prefill attention's O rescaled only in tiles where a row's max moved
# (ALAP_PREFILL_LAZY_RESCALE, the same bits) against every tile (=0), same call: attn_gpu_test,
# attn_gpu_bench --prefill-only in alternating rounds, Llama-3-8B Q4_K at 32k end to end.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s44c6; mkdir -p $o $w/new $w/old
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
[ -f $m/llama3-8b-q4_k.gguf ] || $d/make_random_model llama3-8b q4_k $m/llama3-8b-q4_k.gguf > /dev/null 2>&1 &
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  $nvcc $flags -x cu -c $src -o $w/new/$n.o > $w/new/$n.log 2>&1 &
  $nvcc $flags -DALAP_PREFILL_LAZY_RESCALE=0 -x cu -c $src -o $w/old/$n.o > $w/old/$n.log 2>&1 &
done
for t in attn_gpu_test attn_gpu_bench; do
  $nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/$t.cpp -o $w/$t.o > $w/$t.log 2>&1 &
done
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
wait
for v in new old; do
  $nvcc -shared -arch=sm_90 $w/$v/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1
  for t in attn_gpu_test attn_gpu_bench; do $nvcc -arch=sm_90 $w/$t.o $w/$v/*.o $w/fp16.o -o $w/$v/$t >> $w/$v/link.log 2>&1; done
done
echo "built $(at)"; nvidia-smi --query-gpu=name --format=csv,noheader
$w/new/attn_gpu_test > $w/new/test.log 2>&1; echo "new attn_gpu_test rc=$? $(tail -1 $w/new/test.log)"
for r in 1 2; do for v in old new; do
  echo "== $v round $r" >> $w/attn_bench.txt; $w/$v/attn_gpu_bench --prefill-only >> $w/attn_bench.txt 2>&1
done; done
echo "attn bench $(at)"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for v in old new old new; do for mode in k8 k8v8; do
  [ $(( $(date +%s) - start )) -gt 125 ] && break 2
  echo "$v $mode $(ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 timeout 30 $d/forward_gpu_device bench $m/llama3-8b-q4_k.gguf 32768 $mode -1 2>&1 | grep '^bench' | sed -E 's/.*: prefill ([0-9]+) tok.*/\1/')" | tee -a $w/e2e.txt
done; done
python3 - $w/attn_bench.txt <<'PY'
import re, sys, collections
cur = None; d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r'== (\w+) round', l)
    if m: cur = m.group(1); continue
    m = re.match(r'prefill (\S+)\s+(\S+)\s+n_q=\s*(\d+) pos0=\s*(\d+):.*best scalar [\d.]+ new ([\d.]+) us', l)
    if m: d[m.group(1, 2, 3, 4)][cur].append(float(m.group(5)))
for k, v in d.items():
    a, b = min(v['old']), min(v['new'])
    print(f"| {' | '.join(k)} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
PY
tar czf $o/call6.tgz -C $w --exclude='*.o' --exclude='*.so' --exclude=attn_gpu_test --exclude=attn_gpu_bench .
echo "done $(at)"
