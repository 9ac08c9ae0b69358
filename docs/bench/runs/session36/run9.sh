#!/bin/bash
# Session 36, device call 9: the int8 prefill product kernel loads its mma fragments with ldmatrix
# (one x4 for an m tile's A words of a 32-block, one x4 for two n tiles' B words) instead of one
# 32-bit shared load a register: call 8's ncu put its L1/shared pipe at 69% against 55% of issue.
# ld0 = as shipped (ALAP_MMA_LDMATRIX=0), ld1 = ldmatrix; the same fragments, so the same bits.
# 1. ops_gpu_test (all) with ld0 and ld1 (the printed errors must match); memcheck and racecheck
#    on --small with ld1.
# 2. ops_gpu_test --bench-prefill, ld0 / ld1.
# 3. End to end prefill at chunks of 2048 and 512, ld0 / ld1, two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/ld
for v in ld0 ld1; do [ -f $d/$v/libalap_gpu.so ] || gunzip -k $d/$v/libalap_gpu.so.gz; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for v in ld0 ld1; do
  LD_LIBRARY_PATH=$PWD/$d/$v:$LD_LIBRARY_PATH timeout 120 $d/ops_gpu_test > "$o/ops_$v.txt" 2>&1
  echo "ops $v rc=$? $(tail -1 "$o/ops_$v.txt") $(at)"
  grep -E "FAIL|FATAL|^matmul" "$o/ops_$v.txt" | head -6
done
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$PWD/$d/ld1:$LD_LIBRARY_PATH timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > "$o/san_$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$o/san_$tool.txt" | tail -1) | $(grep -E "^(PASS|FAIL)" "$o/san_$tool.txt" | tail -1) $(at)"
done
for v in ld0 ld1; do
  LD_LIBRARY_PATH=$PWD/$d/$v:$LD_LIBRARY_PATH timeout 150 $d/ops_gpu_test --bench-prefill > "$o/bench_$v.txt" 2>&1
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
    run ld0-2048 ld0 2048 $model; run ld1-2048 ld1 2048 $model; run ld0-512 ld0 512 $model; run ld1-512 ld1 512 $model
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
for v in ('ld0', 'ld1'):
    for l in open(f"{sys.argv[1]}/bench_{v}.txt"):
        c = [x.strip() for x in l.split('|')]
        if len(c) > 10 and c[1] in ('8B', '1B', '0.5B'):
            rows.setdefault((c[1], c[2], c[3], c[4]), {})[v] = float(c[9])
for k, v in rows.items():
    print(*k, f"ld0 {v['ld0']:.4f} ld1 {v['ld1']:.4f} ld1/ld0 {v['ld1'] / v['ld0']:.3f}")
PY
echo "done $(at)"
