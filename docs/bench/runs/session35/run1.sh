#!/bin/bash
# Session 35, device call 1: where a decode step's device time goes (measurement build: kinds of
# kernel left out, ALAP_GPU_SKIP), and L2 prefetch nodes for coming weights (ALAP_GPU_PF).
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
d=.dev/s35/pf
export ALAP_GPU_LIBRARY=$PWD/$d/libalap_gpu.so
m=/tmp/rm
mkdir -p $m
for spec in "qwen2.5-0.5b q4_k" "llama3-8b q4_k"; do
  set -- $spec
  [ -f $m/$1-$2.gguf ] || $d/make_random_model $1 $2 $m/$1-$2.gguf > /dev/null 2>&1 &
done
wait
echo "models $(( $(date +%s) - start )) s"
b=$o/ab.log
: > $b
run() {  # LABEL ENV MODEL
  echo "[$1]" >> $b
  env $2 timeout 60 $d/forward_gpu_device bench "$m/$3.gguf" 4096 k8 -1 nofill 2>&1 | grep -v '^device:' >> $b
}
V=(
 "base|X=1"
 "skip-n1|ALAP_GPU_SKIP=n1" "skip-qkv|ALAP_GPU_SKIP=qkv" "skip-rope|ALAP_GPU_SKIP=rope" "skip-attn|ALAP_GPU_SKIP=attn"
 "skip-wo|ALAP_GPU_SKIP=wo" "skip-n2|ALAP_GPU_SKIP=n2" "skip-gu|ALAP_GPU_SKIP=gu" "skip-sw|ALAP_GPU_SKIP=sw"
 "skip-down|ALAP_GPU_SKIP=down" "skip-out|ALAP_GPU_SKIP=out"
 "products-only|ALAP_GPU_SKIP=n1,rope,attn,n2,sw" "no-products|ALAP_GPU_SKIP=qkv,wo,gu,down,out"
 "nothing|ALAP_GPU_SKIP=n1,qkv,rope,attn,wo,n2,gu,sw,down,out"
 "pf-null|ALAP_GPU_PF=qkv:wo:0"
 "pf-qkv:wo|ALAP_GPU_PF=qkv:wo" "pf-attn:wo|ALAP_GPU_PF=attn:wo" "pf-attn:gu16|ALAP_GPU_PF=attn:gu:16"
 "pf-n2:gu24|ALAP_GPU_PF=n2:gu:24" "pf-sw:down16|ALAP_GPU_PF=sw:down:16" "pf-down:qkvn|ALAP_GPU_PF=down:qkvn"
 "pf-combo|ALAP_GPU_PF=qkv:wo,attn:gu:16,down:qkvn"
 "pf-qkv:wo-c64|ALAP_GPU_PF=qkv:wo ALAP_GPU_PF_CHUNK=64 ALAP_GPU_PF_BLOCKS=16"
)
for rep in 1 2; do
  for model in llama3-8b-q4_k qwen2.5-0.5b-q4_k; do
    for v in "${V[@]}"; do run "${v%%|*}" "${v#*|}" $model; done
  done
  echo "rep $rep $(( $(date +%s) - start )) s"
done
python3 - $b <<'PY' | tee $o/medians.txt
import sys, re, statistics, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
lab = key = None
order = []
for l in open(sys.argv[1]):
    if l.startswith('['): lab = l.strip()[1:-1]; continue
    m = re.match(r'bench \S+/(\S+)\.gguf ctx (\d+) (\S+)', l)
    if m: key = m.groups(); continue
    m = re.search(r'a step: ([\d.]+) us a token in the loop, ([\d.]+) us as a graph.*steady: ([\d.]+) us', l)
    if m:
        d[key][lab].append(tuple(map(float, m.groups())))
        if lab not in order: order.append(lab)
for key, hows in d.items():
    base = statistics.median(x[1] for x in hows.get('base', [(0, 0, 0)]))
    print(*key)
    for h in order:
        v = hows.get(h)
        if not v: continue
        dev = [x[1] for x in v]
        print(f"  {h:16s} device {statistics.median(dev):8.1f} us ({' '.join(f'{x:.1f}' for x in dev)})  "
              f"delta {statistics.median(dev) - base:+7.1f}  steady {statistics.median(x[2] for x in v):8.1f}")
PY
echo "done $(( $(date +%s) - start )) s"
