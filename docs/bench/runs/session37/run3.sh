#!/bin/bash
# Session 37, device call 3: decode attention that does the step's bias, q/k norms, RoPE and new
# K/V rows itself (attn_decode_params::rope), so a decode step has one launch fewer a layer.
# fold = the working tree's library (ABI 3); base = the library of call 1 (HEAD of dcd515b's
# attention; ABI 2), for attention alone only (its structs are a prefix of ABI 3's).
# 1. ops_gpu_test (all: test_rope_in_attention byte for byte against gpu_rope_store_1 + attention),
#    attn_gpu_test, memcheck/racecheck (--small), forward_gpu_device check (fold, and
#    ALAP_GPU_ROPE_IN_ATTN=0);
# 2. decode steps, fold against ALAP_GPU_ROPE_IN_ATTN=0 (same library), three rounds;
# 3. attention alone (rope 0) base against fold at 16k and 32k, three rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
w=/tmp/r3
mkdir -p "$o" $w
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s37/carry
for v in fold base; do gunzip -kf $d/$v/libalap_gpu.so.gz; done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $w/machine.txt 2>&1
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "qwen2.5-1.5b q4_k" "qwen3-0.6b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
with() { local v=$1; shift; env LD_LIBRARY_PATH=$PWD/$d/$v:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$PWD/$d/$v/libalap_gpu.so "$@"; }
with fold timeout 150 $d/ops_gpu_test > $w/ops.txt 2>&1
echo "ops rc=$? $(tail -n 1 $w/ops.txt) $(at)"
grep -E "FAIL|FATAL" $w/ops.txt | head -8
with fold timeout 150 $d/attn_gpu_test > $w/attn_test.txt 2>&1
echo "attn_gpu_test rc=$? $(tail -n 1 $w/attn_test.txt) $(at)"
grep -E "FAIL|FATAL" $w/attn_test.txt | head -5
for tool in memcheck racecheck; do
  with fold timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > $w/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $w/san_$tool.txt | tail -1) | $(grep -E "^(PASS|FAIL)" $w/san_$tool.txt | tail -1) $(at)"
done
with fold timeout 120 $d/forward_gpu_device check > $w/check_fold.txt 2>&1
echo "check fold rc=$? $(tail -n 1 $w/check_fold.txt) $(at)"
with fold env ALAP_GPU_ROPE_IN_ATTN=0 timeout 120 $d/forward_gpu_device check > $w/check_sep.txt 2>&1
echo "check sep rc=$? $(tail -n 1 $w/check_sep.txt) $(at)"
wait
echo "models written $(at)"
b=$w/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX MODE
  echo "[$1]" >> $b
  with fold env ALAP_BENCH_SAMPLE=1 $2 timeout 90 $d/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 nofill 2>&1 | grep -v '^device:' >> $b
}
for r in 1 2 3; do
  for spec in "llama3-8b-q4_k 4096 k8" "llama3.2-1b-q4_k 4096 k8" "qwen2.5-0.5b-q4_k 4096 k8" "qwen2.5-1.5b-q4_k 4096 k8" \
              "qwen3-0.6b-q4_k 4096 k8" "qwen2.5-0.5b-q4_k 1024 f16" "llama3.2-1b-q4_k 4096 k8v8" "llama3-8b-q4_k 32768 k8"; do
    run sep ALAP_GPU_ROPE_IN_ATTN=0 $spec
    run fold ALAP_GPU_ROPE_IN_ATTN=1 $spec
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
for r in 1 2 3; do
  for v in base fold; do
    with $v timeout 120 $d/attn_gpu_bench --ctx 16384,32768 --reps 3 --no-prefill --no-step > $w/attn_${v}_$r.txt 2>&1
    echo "attn bench $v round $r rc=$? $(at)"
  done
done
grep -h -E "^\|" $w/attn_base_1.txt | head -12
grep -h -E "^\|" $w/attn_fold_1.txt | head -12
tar czf $o/run3.tgz -C $w .
echo "done $(at)"
