#!/bin/bash
# Session 36, device call 6: quantised prefill products on the bf16 matrix units
# (matmul_bf16_mma_kernel: each 32-block dequantised once a tile to bf16, x rounded to bf16,
# mma.m16n8k16 with fp32 accumulation across all of K), against the int8 kernel in one library
# (ALAP_GPU_PREFILL=int8 keeps the int8 kernels).
# 1. ops_gpu_test (all; bf16-128/64/32 bit-identical, within 8.5e-3 of Σ|W·x| of the f32 product);
#    compute-sanitizer memcheck and racecheck on --small.
# 2. forward_gpu_device check (bf16 prefill in its 100-token prompts).
# 3. ops_gpu_test --bench-prefill: every kernel at the engine's product shapes and every type.
# 4. End to end prefill (3840 tokens in chunks of 512), int8 / bf16, two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/bf
[ -f $d/libalap_gpu.so ] || gunzip -k $d/libalap_gpu.so.gz
export LD_LIBRARY_PATH=$PWD/$d:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$PWD/$d/libalap_gpu.so
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k" "llama3.2-1b q8_0" "qwen3-0.6b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
timeout 150 $d/ops_gpu_test > "$o/ops.txt" 2>&1
echo "ops rc=$? $(tail -1 "$o/ops.txt") $(at)"
grep -E "FAIL|FATAL|^matmul" "$o/ops.txt" | head -12
for tool in memcheck racecheck; do
  timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --report-api-errors no $d/ops_gpu_test --small > "$o/san_$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$o/san_$tool.txt" | tail -1) | $(grep -E "^(PASS|FAIL)" "$o/san_$tool.txt" | tail -1) $(at)"
done
timeout 100 $d/forward_gpu_device check > "$o/check.txt" 2>&1
echo "check rc=$? $(tail -1 "$o/check.txt") $(at)"
timeout 200 $d/ops_gpu_test --bench-prefill > "$o/bench.txt" 2>&1
echo "bench-prefill rc=$? $(at)"
wait
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL CTX MODE
  echo "[$1]" >> $b
  env ALAP_BENCH_CHUNK=512 $2 timeout 90 $d/forward_gpu_device bench "$m/$3.gguf" $4 $5 -1 2>&1 | grep -v '^device:' >> $b
}
ab() { for i in 1 2; do run int8 ALAP_GPU_PREFILL=int8 "$@"; run bf16 ALAP_GPU_PREFILL=bf16 "$@"; done; }
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
python3 - $o/bench.txt <<'PY' | tee $o/products.txt
import sys
for l in open(sys.argv[1]):
    c = [x.strip() for x in l.split('|')]
    if len(c) > 16 and c[1] in ('8B', '1B', '0.5B'):
        i8 = min(float(c[6]), float(c[7]), float(c[8])); bf = min(float(c[9]), float(c[10]), float(c[11]))
        print(*c[1:5], f"int8 best {i8:.4f} bf16 best {bf:.4f} auto {c[12]} ({c[13]} TF/s) int8/bf16 {i8 / bf:.2f}")
PY
echo "done $(at)"
