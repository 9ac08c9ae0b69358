#!/bin/bash
# Session 36, device call 3: the small kernels of a decode step let their dependents launch before
# they wait (griddepcontrol.launch_dependents first). Three libraries of one tree (ALAP_PDL_EARLY):
# pe0 = as shipped (wait, then release), pe1 = rms_norm_q8 and swiglu_q8 release first (a weight
# product follows each), pe2 = also rope_store_1 (decode attention follows).
# 1. forward_gpu_device check with pe1 and pe2 (logits against the CPU, graphs).
# 2. End to end, rotating pe0 / pe1 / pe2, two rounds.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
d=.dev/s36/pe
for v in 0 1 2; do [ -f $d/pe$v/libalap_gpu.so ] || gunzip -k $d/pe$v/libalap_gpu.so.gz; done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "qwen2.5-1.5b q4_k" "llama3-8b q4_k" "qwen3-0.6b q4_k"; do
  set -- $spec
  $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
for v in 1 2; do
  ALAP_GPU_LIBRARY=$PWD/$d/pe$v/libalap_gpu.so timeout 90 $d/forward_gpu_device check > "$o/check_pe$v.txt" 2>&1
  echo "check pe$v rc=$? $(tail -1 "$o/check_pe$v.txt") $(at)"
done
wait
b=$o/ab.log
: > $b
run() {  # LABEL MODEL CTX MODE
  echo "[$1]" >> $b
  ALAP_BENCH_SAMPLE=1 ALAP_GPU_LIBRARY=$PWD/$d/$1/libalap_gpu.so timeout 60 $d/forward_gpu_device bench "$m/$2.gguf" $3 $4 -1 nofill 2>&1 |
    grep -v '^device:' >> $b
}
abc() { for i in 1 2; do run pe0 "$@"; run pe1 "$@"; run pe2 "$@"; done; }
abc qwen2.5-0.5b-q4_k 4096 k8; abc llama3.2-1b-q4_k 4096 k8; abc llama3-8b-q4_k 4096 k8
abc qwen2.5-1.5b-q4_k 4096 k8; abc qwen3-0.6b-q4_k 4096 k8
abc qwen2.5-0.5b-q4_k 1024 f16; abc qwen2.5-0.5b-q4_k 32768 k8; abc llama3-8b-q4_k 32768 k8
abc llama3.2-1b-q4_k 16384 k8v8
echo "bench $(at)"
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
