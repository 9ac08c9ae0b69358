#!/bin/bash
# Session 47, device call 1: session 46's call 1 (docs/bench/runs/session46/call1.sh) with attn_gpu_test
# built for each variant, so that v8s's test widens its k8v8 prefill bound for V's rounding to fp16
# (tests/kernels/gpu/prefill_bound.h: prefill_v8_rounded_to_fp16). Run as
# VS="all v8s both" bash docs/bench/runs/session47/call1.sh (carry .dev/s43: forward_gpu_device,
# make_random_model, the eval model and its token ids).
set -u -o pipefail
o=${OUT:-/tmp/out}; w=/tmp/s47c1; mkdir -p $o $w/all $w/fma $w/fmas
start=$(date +%s); at() { echo "(at $(( $(date +%s) - start )) s)"; }
# Logs into $OUT as they come (a call cut short still returns them).
# One archive, rewritten each time: the device tool returns only a few files from $OUT.
save() { (cd $w && find . -type f \( -name '*.log' -o -name '*.txt' -o -name '*.md' \) -size -2M -print0 | tar czf $o/logs.tgz --null -T -); }
nvcc=/usr/local/cuda/bin/nvcc
flags="-std=c++20 -O3 -arch=sm_90 -I. -Ikernels/include -Xcompiler=-fPIC"
declare -A vf=([all]="" [fmas]="-DALAP_PREFILL_K8_FMA=1" [v8s]="-DALAP_PREFILL_V8_SCALED=1" [both]="-DALAP_PREFILL_K8_FMA=1 -DALAP_PREFILL_V8_SCALED=1")
vs=${VS:-"all fmas v8s both"}
for v in $vs; do mkdir -p $w/$v; done
d=.dev/s43/carry
m=/tmp/rm; mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3.2-1b q4_k" "llama3-8b q4_k"; do
  set -- $spec; [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
# The switches touch attn_prefill_mma.h alone (attn_k8_prefill.hip): the other objects are built once.
mkdir -p $w/common
for src in kernels/gpu/*.hip; do
  n=$(basename $src .hip)
  if [ $n = attn_k8_prefill ]; then
    for v in $vs; do $nvcc $flags ${vf[$v]} -x cu -c $src -o $w/$v/$n.o > $w/$v/$n.log 2>&1 & done
  else
    $nvcc $flags -x cu -c $src -o $w/common/$n.o > $w/common/$n.log 2>&1 &
  fi
done
for v in $vs; do
  $nvcc $flags ${vf[$v]} -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_test.cpp -o $w/$v/attn_gpu_test.x > $w/$v/attn_gpu_test.log 2>&1 &
done
$nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/attn_gpu_bench.cpp -o $w/attn_gpu_bench.o > $w/attn_gpu_bench.log 2>&1 &
g++ -std=c++20 -O2 -mf16c -I. -Ikernels/include -c kernels/cpu/fp16.cpp -o $w/fp16_a.o &&
  g++ -std=c++20 -O2 -I. -Ikernels/include -c kernels/cpu/cpu_features.cpp -o $w/cpu_features.o &&
  ld -r $w/fp16_a.o $w/cpu_features.o -o $w/fp16.o &
wait
for v in $vs; do
  $nvcc -shared -arch=sm_90 $w/$v/*.o $w/common/*.o -o $w/$v/libalap_gpu.so -lcudart > $w/$v/link.log 2>&1
  $nvcc -arch=sm_90 $w/attn_gpu_bench.o $w/$v/*.o $w/common/*.o $w/fp16.o -o $w/$v/attn_gpu_bench >> $w/$v/link.log 2>&1
  $nvcc -arch=sm_90 $w/$v/attn_gpu_test.x $w/$v/*.o $w/common/*.o $w/fp16.o -o $w/$v/attn_gpu_test >> $w/$v/link.log 2>&1
done
for v in $vs; do
  /usr/local/cuda/bin/cuobjdump -sass $w/$v/attn_k8_prefill.o 2>/dev/null | python3 -c '
import sys, re, collections
name = None; cs = collections.defaultdict(collections.Counter)
for l in sys.stdin:
    m = re.search(r"Function : (\S+)", l)
    if m: name = m.group(1); continue
    m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", l)
    if m and name and "attn_prefill_mma_kernelILb1ELb0ELi128" in name: cs[name][m.group(1).split(".")[0]] += 1
for n, c in cs.items():
    print(sys.argv[1], n[-16:], "SASS:", sum(c.values()), " ".join(f"{k} {v}" for k, v in c.most_common(12)))
' $v
done
echo "built $(at)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader; cat $w/*/link.log | head -5
for v in $vs; do
  $w/$v/attn_gpu_test > $w/$v/attn_test.log 2>&1; echo "$v attn_gpu_test rc=$? $(tail -1 $w/$v/attn_test.log)" | tee -a $w/checks.txt
  grep FAIL $w/$v/attn_test.log | head -3
  grep "of its bound" $w/$v/attn_test.log | awk -v v=$v '{e = $(NF-4) + 0; r = $NF + 0; if (e > me) me = e; if (r > mr) mr = r} END {printf "%s prefill: max error %.2e, largest error / bound %.2f\n", v, me, mr}' | tee -a $w/checks.txt
done
echo "checks $(at)"; save
for r in 1 2 3; do for v in $vs; do
  echo "== $v round $r" >> $w/attn_bench.txt; $w/$v/attn_gpu_bench --prefill-only --no-scalar >> $w/attn_bench.txt 2>&1
done; done
echo "attn bench $(at)"; save
python3 - $w/attn_bench.txt <<'PY' | tee $w/attn_table.md
import re, sys, collections
cur = None; d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r'== (\w+) round', l)
    if m: cur = m.group(1); continue
    m = re.match(r'prefill (\S+)\s+(\S+)\s+n_q=\s*(\d+) pos0=\s*(\d+):.*best scalar \S+ new ([\d.]+) us', l)
    if m: d[m.group(1, 2, 3, 4)][cur].append(float(m.group(5)))
vs = [x for x in ['all', 'fmas', 'v8s', 'both'] if x in set(k for d0 in d.values() for k in d0)]
print("| mode | model | n_q | pos0 | " + " | ".join(f"{x} µs" for x in vs) + " | " + " | ".join(f"all/{x}" for x in vs[1:]) + " |")
print("|---|---|---:|---:|" + "---:|" * (2 * len(vs) - 1))
for k, v in d.items():
    b = [min(v[x]) for x in vs]
    print(f"| {' | '.join(k)} | " + " | ".join(f"{x:.1f}" for x in b) + " | " + " | ".join(f"{b[0] / x:.3f}" for x in b[1:]) + " |")
PY
for v in $vs; do
  for lang in en; do
    for mode in k8 k8v8; do
      ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so LD_LIBRARY_PATH=/usr/local/cuda/lib64 timeout 40 $d/forward_gpu_device ppl .dev/s43/models/alap-eval-30m-q4_k_m.gguf .dev/s43/models/ids_$lang.txt 512 40 $mode 2>&1 | grep "^ppl" | sed "s/^/$v $lang $mode /" | tee -a $w/ppl.txt
    done
  done
done
echo "ppl $(at)"; save
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
for r in 1 2; do for v in $vs; do
  IFS=';' read -r -a specs <<< "${E2E:-llama3-8b-q4_k 32768 k8;llama3-8b-q4_k 32768 k8v8;llama3-8b-q4_k 32768 f16}"
  for spec in "${specs[@]}"; do
    [ $(( $(date +%s) - start )) -gt 250 ] && { echo "e2e cut at round $r $v $spec $(at)"; break 3; }
    set -- $spec
    echo "== $v round $r $1 $2 $3" >> $w/e2e.txt
    ALAP_GPU_LIBRARY=$w/$v/libalap_gpu.so ALAP_BENCH_CHUNK=2048 ALAP_BENCH_SAMPLE=1 timeout 60 $d/forward_gpu_device bench $m/$1.gguf $2 $3 -1 2>&1 | grep "^bench" >> $w/e2e.txt
  done
done; done
echo "e2e $(at)"; save
paste -d' ' - - < $w/e2e.txt | sed -E 's/bench \/tmp\/rm\/[^ ]+ ctx [0-9]+ [a-z0-9]+ layers [0-9/]+: //; s/, decode.*//'
if [ -z "${NO_OPS:-}" ] && [ $(( $(date +%s) - start )) -lt 280 ]; then
  ( OUT=$w/ops ALAP_SKIP_BENCH=1 ALAP_SKIP_SAN=1 timeout 150 bash tests/kernels/gpu/run_ops_h200.sh > $w/ops_run.log 2>&1; echo "ops script rc=$?" >> $w/ops_run.log )
  grep -E "rc=|FAIL|PASS" $w/ops_run.log | head -8
  grep -h "blas status\|not looked\|FAIL" $w/ops/*.log 2>/dev/null | head -8
fi
save
echo "done $(at)"
