#!/bin/bash
# Session 36, device call 4: prefill products on the int8 matrix units (matmul_q8_mma_kernel) ask for
# the next K step's lines while they stage and compute this one. Three libraries of one tree
# (ALAP_MMA_PREFETCH): mp0 = as shipped (no prefetch), mp1 = into L1, mp2 = into L2.
# 1. ops_gpu_test (all) with mp1 and mp2.
# 2. ops_gpu_test --bench-prefill (the engine's product shapes, 128 and 512 tokens), each library.
# 3. End to end prefill (3840 tokens in chunks of 512, then 64 decode steps), rotating the three, two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/mp
for v in 0 1 2; do [ -f $d/mp$v/libalap_gpu.so ] || gunzip -k $d/mp$v/libalap_gpu.so.gz; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "llama3.2-1b q8_0"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for v in 1 2; do
  LD_LIBRARY_PATH=$PWD/$d/mp$v:$LD_LIBRARY_PATH timeout 120 $d/ops_gpu_test > "$o/ops_mp$v.txt" 2>&1
  echo "ops mp$v rc=$? $(tail -1 "$o/ops_mp$v.txt") $(at)"
  grep -E "FAIL|FATAL" "$o/ops_mp$v.txt" | head -5
done
for v in 0 1 2; do
  LD_LIBRARY_PATH=$PWD/$d/mp$v:$LD_LIBRARY_PATH ALAP_BENCH_PREFILL=engine timeout 120 $d/ops_gpu_test --bench-prefill > "$o/bench_mp$v.txt" 2>&1
  echo "bench-prefill mp$v rc=$? $(at)"
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_CHUNK=512 ALAP_GPU_LIBRARY=$PWD/$d/$1/libalap_gpu.so timeout 90 $d/forward_gpu_device bench "$m/$2.gguf" $3 $4 -1 2>&1 |
    grep -v '^device:' >> $b
}
abc() { for i in 1 2; do run mp0 "$@"; run mp1 "$@"; run mp2 "$@"; done; }
abc llama3-8b-q4_k 4096 k8; abc llama3.2-1b-q4_k 4096 k8; abc qwen2.5-0.5b-q4_k 4096 k8; abc llama3.2-1b-q8_0 4096 k8
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
    print(*key, " | ".join(f"{h}: prefill {statistics.median(x[0] for x in v):.0f} tok/s ({', '.join(f'{x[0]:.0f}' for x in v)}), decode {statistics.median(x[1] for x in v):.1f}" for h, v in hows.items()))
PY
python3 - $o <<'PY' | tee $o/products.txt
import sys, re
rows = {}
for v in (0, 1, 2):
    for l in open(f"{sys.argv[1]}/bench_mp{v}.txt"):
        c = [x.strip() for x in l.split('|')]
        if len(c) > 10 and c[1] in ('8B', '1B', '0.5B'):
            rows.setdefault((c[1], c[2], c[3], c[4]), {})[v] = float(c[9])  # auto ms
for k, v in rows.items():
    print(*k, " ".join(f"mp{i} {v.get(i, 0):.4f}" for i in (0, 1, 2)), f"mp1/mp0 {v.get(1, 0) / v[0]:.3f} mp2/mp0 {v.get(2, 0) / v[0]:.3f}")
PY
echo "done $(at)"
