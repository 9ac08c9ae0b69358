#!/bin/bash
# Session 36, device call 7: the int8 mma prefill kernel compiled for 3 and 4 blocks a
# multiprocessor (ALAP_MMA_MINB; shipped: 2), so that one block's staging overlaps more blocks'
# mma steps; and the engine's GPU prefill chunk (512) against 1024 and 2048 tokens.
# 1. ops_gpu_test with mb3 (products' checks).
# 2. ops_gpu_test --bench-prefill (engine shapes), base / mb3 / mb4.
# 3. End to end: base / mb3 at chunks of 512; base at 1024 and 2048; two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/mb
for v in base mb3 mb4; do [ -f $d/$v/libalap_gpu.so ] || gunzip -k $d/$v/libalap_gpu.so.gz; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
LD_LIBRARY_PATH=$PWD/$d/mb3:$LD_LIBRARY_PATH timeout 120 $d/ops_gpu_test > "$o/ops_mb3.txt" 2>&1
echo "ops mb3 rc=$? $(tail -1 "$o/ops_mb3.txt") $(at)"
for v in base mb3 mb4; do
  LD_LIBRARY_PATH=$PWD/$d/$v:$LD_LIBRARY_PATH ALAP_BENCH_PREFILL=engine timeout 120 $d/ops_gpu_test --bench-prefill > "$o/bench_$v.txt" 2>&1
  echo "bench-prefill $v rc=$? $(at)"
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL LIB CHUNK MODEL
  echo "[$1]" >> $b
  ALAP_BENCH_CHUNK=$3 ALAP_GPU_LIBRARY=$PWD/$d/$2/libalap_gpu.so timeout 90 $d/forward_gpu_device bench "$m/$4.gguf" 4096 k8 -1 2>&1 |
    grep -v '^device:' >> $b
}
for i in 1 2; do
  for model in llama3-8b-q4_k llama3.2-1b-q4_k qwen2.5-0.5b-q4_k; do
    run base-512 base 512 $model; run mb3-512 mb3 512 $model; run base-1024 base 1024 $model; run base-2048 base 2048 $model
  done
done
echo "e2e $(at)"
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip()[1:-1]; continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+).*prefill ([\d.]+) tok/s.*decode ([\d.]+) tok/s', l)
    if m:
        key = m.groups()[:3]; d[key][lab].append((float(m.group(4)), float(m.group(5))))
for key, hows in d.items():
    print(*key, " | ".join(f"{h}: prefill {statistics.median(x[0] for x in v):.0f} tok/s ({', '.join(f'{x[0]:.0f}' for x in v)})" for h, v in hows.items()))
PY
python3 - $o <<'PY' | tee $o/products.txt
import sys
rows = {}
for v in ('base', 'mb3', 'mb4'):
    for l in open(f"{sys.argv[1]}/bench_{v}.txt"):
        c = [x.strip() for x in l.split('|')]
        if len(c) > 10 and c[1] in ('8B', '1B', '0.5B'):
            rows.setdefault((c[1], c[2], c[3], c[4]), {})[v] = (min(float(c[6]), float(c[7]), float(c[8])), float(c[9]))
for k, v in rows.items():
    b = v['base']
    print(*k, " ".join(f"{n} best {x[0]:.4f} auto {x[1]:.4f}" for n, x in v.items()), f"mb3/base auto {v['mb3'][1] / b[1]:.3f} mb4/base {v['mb4'][1] / b[1]:.3f}")
PY
echo "done $(at)"
