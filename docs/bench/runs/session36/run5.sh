#!/bin/bash
# Session 36, device call 5: the prefill products on the int8 matrix units (matmul_q8_mma_kernel)
# copy the next K step's raw weight and activation bytes into shared memory with cp.async while
# they compute this one, and unpack from shared memory. Two libraries of one tree
# (ALAP_MMA_ASYNC): as0 = as shipped (the unpack reads global memory between two barriers),
# as1 = the copies.
# 1. ops_gpu_test (all) with as1; compute-sanitizer memcheck and racecheck on --small with as1.
# 2. forward_gpu_device check with as1.
# 3. ops_gpu_test --bench-prefill (the engine's product shapes at 128 and 512 tokens, then every
#    type at 512), each library.
# 4. End to end prefill (3840 tokens in chunks of 512, then 64 decode steps), as0 / as1, two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/as
for v in 0 1; do [ -f $d/as$v/libalap_gpu.so ] || gunzip -k $d/as$v/libalap_gpu.so.gz; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "llama3.2-1b q8_0" "qwen3-0.6b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
L1=$PWD/$d/as1:$LD_LIBRARY_PATH
LD_LIBRARY_PATH=$L1 timeout 120 $d/ops_gpu_test > "$o/ops_as1.txt" 2>&1
echo "ops as1 rc=$? $(tail -1 "$o/ops_as1.txt") $(at)"
grep -E "FAIL|FATAL|^matmul" "$o/ops_as1.txt" | head -8
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$L1 timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > "$o/san_$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$o/san_$tool.txt" | tail -1) | $(grep -E "^(PASS|FAIL)" "$o/san_$tool.txt" | tail -1) $(at)"
done
ALAP_GPU_LIBRARY=$PWD/$d/as1/libalap_gpu.so timeout 100 $d/forward_gpu_device check > "$o/check_as1.txt" 2>&1
echo "check as1 rc=$? $(tail -1 "$o/check_as1.txt") $(at)"
for v in 0 1; do
  LD_LIBRARY_PATH=$PWD/$d/as$v:$LD_LIBRARY_PATH timeout 150 $d/ops_gpu_test --bench-prefill > "$o/bench_as$v.txt" 2>&1
  echo "bench-prefill as$v rc=$? $(at)"
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_CHUNK=512 ALAP_GPU_LIBRARY=$PWD/$d/$1/libalap_gpu.so timeout 90 $d/forward_gpu_device bench "$m/$2.gguf" $3 $4 -1 2>&1 |
    grep -v '^device:' >> $b
}
ab() { for i in 1 2; do run as0 "$@"; run as1 "$@"; done; }
ab llama3-8b-q4_k 4096 k8; ab llama3.2-1b-q4_k 4096 k8; ab qwen2.5-0.5b-q4_k 4096 k8; ab llama3.2-1b-q8_0 4096 k8
ab qwen3-0.6b-q4_k 4096 k8; ab llama3-8b-q4_k 4096 f16
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
import sys
rows = {}
for v in (0, 1):
    for l in open(f"{sys.argv[1]}/bench_as{v}.txt"):
        c = [x.strip() for x in l.split('|')]
        if len(c) > 10 and c[1] in ('8B', '1B', '0.5B'):
            rows.setdefault((c[1], c[2], c[3], c[4]), {})[v] = (float(c[9]), c[10], c[12])  # auto ms, TFLOP/s, best MR
for k, v in rows.items():
    a, b = v.get(0), v.get(1)
    if a and b: print(*k, f"as0 {a[0]:.4f} ({a[1]} TF/s, best {a[2]}) as1 {b[0]:.4f} ({b[1]} TF/s, best {b[2]}) as1/as0 {b[0] / a[0]:.3f}")
PY
echo "done $(at)"
