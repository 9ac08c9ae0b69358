#!/bin/bash
# Session 37, device call 4: the issue's end-to-end table, refreshed with the tree's library
# (kernels of 0154fd9): random-weight Qwen2.5-0.5B and Llama-3.2-1B in Q4_K and Q8_0 (and
# Llama-3-8B Q4_K), contexts 4096 and 32768, caches f16, k8 and k8v8; a real prefill to CTX − 256
# in the engine's batches of 2048 (ALAP_BENCH_CHUNK: every layer on the device), then 64 decode
# steps with the app's sampler (ALAP_BENCH_SAMPLE=1). Two rounds (the second skipped past 420 s).
set -u -o pipefail
o=${OUT:-/tmp/out}
w=/tmp/r4
mkdir -p "$o" $w
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s37/carry
gunzip -kf $d/head/libalap_gpu.so.gz
export LD_LIBRARY_PATH=$PWD/$d/head:/usr/local/cuda/lib64 ALAP_GPU_LIBRARY=$PWD/$d/head/libalap_gpu.so
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > $w/machine.txt 2>&1
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "qwen2.5-0.5b q8_0" "llama3.2-1b q4_k" "llama3.2-1b q8_0" "llama3-8b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
echo "models written $(at)"
b=$w/e2e.log
: > $b
for r in 1 2; do
  [ $r = 2 ] && [ $(( $(date +%s) - start )) -gt 420 ] && { echo "round 2 skipped $(at)"; break; }
  for model in qwen2.5-0.5b-q4_k qwen2.5-0.5b-q8_0 llama3.2-1b-q4_k llama3.2-1b-q8_0 llama3-8b-q4_k; do
    for ctx in 4096 32768; do
      for mode in f16 k8 k8v8; do
        echo "[round $r]" >> $b
        ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench "$m/$model.gguf" $ctx $mode -1 2>&1 |
          grep -v '^device:' >> $b
      done
    done
  done
  echo "round $r $(at)"
done
python3 - $b <<'PY' | tee $w/table.md
import sys, re, statistics, collections
rows = collections.defaultdict(list)
key = None
for l in open(sys.argv[1]):
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+) layers \S+: prefill ([\d.]+) tok/s.*decode ([\d.]+) tok/s.*weights ([\d.]+) MiB, kv ([\d.]+) MiB, scratch ([\d.]+) MiB', l)
    if m:
        key = m.group(1, 2, 3); rows[key].append([float(m.group(4)), float(m.group(5)), None, m.group(6), m.group(7), m.group(8)]); continue
    m = re.search(r'as a graph replayed back to back \(the device alone\); steady: ([\d.]+) us', l)
    if m and key and rows[key] and rows[key][-1][2] is None: rows[key][-1][2] = float(m.group(1))
print("| model | ctx | cache | prefill tok/s | decode tok/s (steady) | MiB weights / KV / scratch |")
print("|---|---:|---|---:|---:|---|")
for (model, ctx, mode), v in rows.items():
    pre = statistics.median(x[0] for x in v)
    st = statistics.median(1e6 / x[2] for x in v if x[2])
    print(f"| {model} | {ctx} | {mode} | {pre:.0f} | {st:.0f} | {v[0][3]} / {v[0][4]} / {v[0][5]} |  ({len(v)} runs)")
PY
tar czf $o/run4.tgz -C $w .
echo "done $(at)"
