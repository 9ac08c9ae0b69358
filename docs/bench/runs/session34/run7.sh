#!/bin/bash
# Session 34, device call 7: the steady state of decode (the last 48 of 64 steps: after the first,
# plain, step and the first graph's capture), a capture a position (baked) against a graph a range
# (one), three alternating pairs, the engine's sampler in the loop. Same library as call 6.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
new=.dev/s34/new
export ALAP_GPU_LIBRARY=$PWD/$new/libalap_gpu.so
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen3-0.6b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $new/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX MODE [nofill]
  echo "[$1]" >> $b
  env ALAP_BENCH_SAMPLE=1 $2 timeout 60 $new/forward_gpu_device bench "$m/$3.gguf" "$4" "$5" -1 ${6:-} 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2 3; do run baked ALAP_GPU_ONE_GRAPH=0 "$@"; run one ALAP_GPU_ONE_GRAPH=1 "$@"; done; }
ab qwen2.5-0.5b-q4_k 4096 k8; ab qwen2.5-0.5b-q4_k 32768 k8 nofill; ab qwen2.5-0.5b-q4_k 4096 f16
ab llama3.2-1b-q4_k 4096 k8; ab llama3.2-1b-q4_k 32768 k8 nofill
ab qwen3-0.6b-q4_k 4096 k8; ab llama3-8b-q4_k 4096 k8
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip(); continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+)', l)
    if m: key = m.groups(); continue
    m = re.search(r'a step: ([\d.]+) us a token in the loop, ([\d.]+) us as a graph.*steady: ([\d.]+) us', l)
    if m: d[key][lab].append(tuple(map(float, m.groups())))
for key, hows in d.items():
    print(*key, " | ".join(f"{h} loop {statistics.median(x[0] for x in v):.1f} steady {statistics.median(x[2] for x in v):.1f} "
                         f"({1e6 / statistics.median(x[2] for x in v):.0f} tok/s) device {statistics.median(x[1] for x in v):.1f} us"
                         for h, v in hows.items()))
PY
echo "done $(( $(date +%s) - start )) s"
