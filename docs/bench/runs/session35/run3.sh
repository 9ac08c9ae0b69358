#!/bin/bash
# Session 35, device call 3: candidate rules for the decode attention split count (measurement build:
# ALAP_ATTN_RULE = occ1 (one block an SM), capN (the partials a merge reads <= N KB), both);
# the device's step time (a graph replayed back to back).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35/rule
export ALAP_GPU_LIBRARY=$PWD/$d/libalap_gpu.so
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen2.5-1.5b q4_k" "smollm2-1.7b q4_k" "llama3-8b q4_k"; do
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
V=("base|X=1" "occ1|ALAP_ATTN_RULE=occ1" "occ1cap64|ALAP_ATTN_RULE=occ1cap64" "occ1cap32|ALAP_ATTN_RULE=occ1cap32" "cap64|ALAP_ATTN_RULE=cap64")
C=("qwen2.5-0.5b-q4_k 1024" "qwen2.5-0.5b-q4_k 2048" "qwen2.5-0.5b-q4_k 4096" "qwen2.5-0.5b-q4_k 8192" "qwen2.5-0.5b-q4_k 16384" "qwen2.5-0.5b-q4_k 32768" "llama3.2-1b-q4_k 1024" "llama3.2-1b-q4_k 4096" "llama3.2-1b-q4_k 16384" "llama3.2-1b-q4_k 32768" "qwen2.5-1.5b-q4_k 4096" "qwen2.5-1.5b-q4_k 32768" "smollm2-1.7b-q4_k 4096" "smollm2-1.7b-q4_k 32768" "llama3-8b-q4_k 4096")
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
