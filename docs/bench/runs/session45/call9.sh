#!/bin/bash
# Session 45, device call 9 (the H200 warm from call 8): the prefill attention as the session left it against
# the session's start (attn_prefill_mma.h at e6a91a6, the rest of the tree as it is), in the same call:
# attn_gpu_bench --prefill-only, two alternating rounds; Llama-3-8B Q4_K prompts at 32k, f16 / k8 / k8v8.
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s45c9; mkdir -p $o $w/new $w/start $w/oldtree/kernels
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvcc=/usr/local/cuda/bin/nvcc
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
[ -f $m/llama3-8b-q4_k.gguf ] || $d/make_random_model llama3-8b q4_k $m/llama3-8b-q4_k.gguf > /dev/null 2>&1 &
cp -r kernels/gpu kernels/include $w/oldtree/kernels/
git show e6a91a6:kernels/gpu/attn_prefill_mma.h > $w/oldtree/kernels/gpu/attn_prefill_mma.h
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  $nvcc -std=c++20 -O3 -arch=sm_90 -Ikernels/include -Xcompiler=-fPIC -I. -x cu -c $src -o $w/new/$n.o > $w/new/$n.log 2>&1 &
  $nvcc -std=c++20 -O3 -arch=sm_90 -Ikernels/include -Xcompiler=-fPIC -I$w/oldtree -I. -x cu -c $w/oldtree/kernels/gpu/$n.hip -o $w/start/$n.o > $w/start/$n.log 2>&1 &
done
$nvcc -std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_bench.cpp -o $w/attn_gpu_bench.o > $w/attn_gpu_bench.log 2>&1 &
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
wait
for v in new start; do
  $nvcc -shared -arch=sm_90 $w/$v/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1
  $nvcc -arch=sm_90 $w/attn_gpu_bench.o $w/$v/*.o $w/fp16.o -o $w/$v/attn_gpu_bench >> $w/$v/link.log 2>&1
done
cmp -s $w/new/attn_k8_prefill.o $w/start/attn_k8_prefill.o && echo "WARNING: the two prefill objects are identical"
echo "built $(at)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat $w/*/link.log | head -5
for r in 1 2; do for v in start new; do
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
print("| mode | model | n_q | pos0 | session start µs | now µs | start / now |")
print("|---|---|---:|---:|---:|---:|---:|")
for k, v in d.items():
    a, b = min(v['start']), min(v['new'])
    print(f"| {' | '.join(k)} | {a:.1f} | {b:.1f} | {a / b:.2f}× |")
PY
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for r in 1 2; do for v in start new; do for mode in f16 k8 k8v8; do
  [ $(( $(date +%s) - start )) -gt 200 ] && { echo "e2e cut at round $r $v $mode $(at)"; break 3; }
  echo "== $v round $r $mode $(ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 timeout 60 $d/forward_gpu_device bench $m/llama3-8b-q4_k.gguf 32768 $mode -1 2>&1 | grep '^bench' | sed -E 's/.*: prefill ([0-9]+) tok.*/\1/')" | tee -a $w/e2e.txt
done; done; done
tar czf $o/call9.tgz -C $w --exclude='*.o' --exclude='*.so' --exclude=attn_gpu_bench --exclude=oldtree .
echo "done $(at)"
