#!/bin/bash
# Session 35, device call 6: the scalar decode body (HIP's) keeps one wave's split (the merge cap is
# the matrix-unit body's only, after call 5 measured the scalar body slower with it): forward check
# and old/new pairs, old = session 34's scalar library, new = this tree's built with -DALAP_ATTN_MMA=0.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35
ALAP_GPU_LIBRARY=$PWD/$d/newscalar/libalap_gpu.so timeout 90 $d/new/forward_gpu_device check > "$o/check_newscalar.txt" 2>&1
echo "check newscalar rc=$? $(tail -1 "$o/check_newscalar.txt") $(at)"
m=/tmp/rm
mkdir -p $m
$d/new/make_random_model qwen2.5-0.5b q4_k $m/qwen2.5-0.5b-q4_k.gguf > /dev/null 2>&1
b=$o/ab.log
: > $b
run() {  # LABEL LIB MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_SAMPLE=1 ALAP_GPU_LIBRARY=$2 timeout 60 $d/new/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 nofill 2>&1 |
    grep -v '^device:' >> $b
}
abs() { for i in 1 2; do run old-scalar $PWD/.dev/s34/scalar/libalap_gpu.so "$@"; run new-scalar $PWD/$d/newscalar/libalap_gpu.so "$@"; done; }
abs qwen2.5-0.5b-q4_k 4096 k8; abs qwen2.5-0.5b-q4_k 16384 k8; abs qwen2.5-0.5b-q4_k 32768 k8
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip()[1:-1]; continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+)', l)
    if m: key = m.groups(); continue
    m = re.search(r'a step: ([\d.]+) us a token in the loop, ([\d.]+) us as a graph.*steady: ([\d.]+) us', l)
    if m: d[key][lab].append(tuple(map(float, m.groups())))
for key, hows in d.items():
    print(*key, " | ".join(f"{h}: device {statistics.median(x[1] for x in v):.1f} us, steady {statistics.median(x[2] for x in v):.1f} us"
                         f" ({1e6 / statistics.median(x[2] for x in v):.0f} tok/s)" for h, v in hows.items()))
PY
echo "done $(at)"
