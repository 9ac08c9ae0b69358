#!/bin/bash
# Session 35, device call 2: decode attention's split count in the step (measurement build:
# ALAP_ATTN_MAXSPLIT caps the splits a KV head, ALAP_ATTN_MINROWS gives each split at least that
# many rows); the device's step time (a graph replayed back to back).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35/sp
export ALAP_GPU_LIBRARY=$PWD/$d/libalap_gpu.so
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen3-0.6b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
echo "models $(( $(date +%s) - start )) s"
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX
  echo "[$1]" >> $b
  env $2 timeout 60 $d/forward_gpu_device bench "$m/$3.gguf" $4 k8 -1 nofill 2>&1 | grep -v '^device:' >> $b
}
V=("base|X=1" "max32|ALAP_ATTN_MAXSPLIT=32" "max16|ALAP_ATTN_MAXSPLIT=16" "max8|ALAP_ATTN_MAXSPLIT=8"
   "rows128|ALAP_ATTN_MINROWS=128" "rows256|ALAP_ATTN_MINROWS=256" "rows512|ALAP_ATTN_MINROWS=512"
   "rows1024|ALAP_ATTN_MINROWS=1024")
C=("qwen2.5-0.5b-q4_k 1024" "qwen2.5-0.5b-q4_k 4096" "qwen2.5-0.5b-q4_k 32768" "llama3.2-1b-q4_k 4096"
   "qwen3-0.6b-q4_k 4096" "llama3-8b-q4_k 4096" "llama3-8b-q4_k 32768" "llama3.2-1b-q4_k 1024")
for rep in 1 2; do
  for c in "${C[@]}"; do
    for v in "${V[@]}"; do run "${v%%|*}" "${v#*|}" $c; done
  done
  echo "rep $rep $(( $(date +%s) - start )) s"
done
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
order = []
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip()[1:-1]; continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+)', l)
    if m: key = m.groups(); continue
    m = re.search(r'a step: ([\d.]+) us a token in the loop, ([\d.]+) us as a graph.*steady: ([\d.]+) us', l)
    if m:
        d[key][lab].append(tuple(map(float, m.groups())))
        if lab not in order: order.append(lab)
for key, hows in d.items():
    base = statistics.median(x[1] for x in hows.get('base', [(0, 0, 0)]))
    print(*key, " ".join(f"{h} {statistics.median(x[1] for x in hows[h]):.1f}({statistics.median(x[1] for x in hows[h]) - base:+.1f})"
                         for h in order if h in hows))
PY
echo "done $(( $(date +%s) - start )) s"
