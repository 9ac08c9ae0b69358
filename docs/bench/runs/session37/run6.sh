#!/bin/bash
# Session 37, device call 6: decode products read the residual (beta = 1) before their PDL wait.
# head = the tree's library (0154fd9's kernels), resid = the working tree's (kernels/gpu/matmul.hip).
# 1. ops_gpu_test (all: the products with beta 0 and 1), --fused,
#    memcheck/racecheck on --small, forward_gpu_device check; 2. decode steps, three rounds
#    alternating.
set -u -o pipefail
o=${OUT:-/tmp/out}
w=/tmp/r6
mkdir -p "$o" $w
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s37/carry
vars="head resid"
for v in $vars; do gunzip -kf $d/$v/libalap_gpu.so.gz; done
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "qwen2.5-1.5b q4_k" "qwen3-0.6b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
with() { local v=$1; shift; env LD_LIBRARY_PATH=$PWD/$d/$v:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$PWD/$d/$v/libalap_gpu.so "$@"; }
with resid timeout 120 $d/ops_gpu_test > $w/ops_resid.txt 2>&1
echo "ops resid rc=$? $(tail -n 1 $w/ops_resid.txt) $(at)"
grep -E "FAIL|FATAL" $w/ops_resid.txt | head -5
with resid timeout 60 $d/ops_gpu_test --fused > $w/fused_resid.txt 2>&1
echo "fused resid rc=$? $(tail -n 1 $w/fused_resid.txt) $(at)"
for tool in memcheck racecheck; do
  with resid timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > $w/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $w/san_$tool.txt | tail -1) | $(grep -E "^(PASS|FAIL)" $w/san_$tool.txt | tail -1) $(at)"
done
with resid timeout 120 $d/forward_gpu_device check > $w/check_resid.txt 2>&1
echo "check resid rc=$? $(tail -n 1 $w/check_resid.txt) $(at)"
wait
echo "models written $(at)"
b=$w/ab.log
: > $b
run() {  # LABEL MODEL CTX MODE
  echo "[$1]" >> $b
  with $1 env ALAP_BENCH_SAMPLE=1 timeout 90 $d/forward_gpu_device bench "$m/$2.gguf" $3 $4 -1 nofill 2>&1 | grep -v '^device:' >> $b
}
for r in 1 2 3; do
  for spec in "llama3-8b-q4_k 4096 k8" "llama3.2-1b-q4_k 4096 k8" "qwen2.5-0.5b-q4_k 4096 k8" "qwen2.5-1.5b-q4_k 4096 k8" \
              "qwen3-0.6b-q4_k 4096 k8" "llama3.2-1b-q4_k 4096 k8v8" "qwen2.5-0.5b-q4_k 4096 f16" "llama3-8b-q4_k 32768 k8"; do
    for v in $vars; do run $v $spec; done
  done
  echo "bench round $r $(at)"
done
python3 - $b <<'PY' | tee $w/medians.txt
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
    print(*key, " | ".join(f"{h}: device {statistics.median(x[1] for x in v):.1f} us ({'/'.join(str(x[1]) for x in v)}), steady {statistics.median(x[2] for x in v):.1f}"
                         for h, v in hows.items()))
PY
tar czf $o/run6.tgz -C $w .
echo "done $(at)"
