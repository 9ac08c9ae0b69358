#!/bin/bash
# Session 33, device call 6: the gate/up product with SwiGLU and its quantiser in one launch
# (gpu_matmul_swiglu_q8). 1. ops_gpu_test (the fused call against the pair, byte for byte, every
# quantised type) and its sanitizers; 2. forward_gpu_device check (fused by default); 3. A/B
# ALAP_GPU_FFN_FUSED=0 / 1 alternating, k8 cache.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=120 timeout 220 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? $(at)"
grep -E "PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -6
grep -E "FAIL" "$o/ops/test.log" 2>/dev/null | head -10
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin ALAP_BENCH_8B=1 timeout 250 bash tests/core/model/run_forward_h200.sh 0 > "$o/fwd.txt" 2>&1
echo "forward check rc=$? $(at)"; grep -E "^check:|check rc" "$o/fwd.txt"
export LD_LIBRARY_PATH=/tmp/alap-fwd:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -f /tmp/alap-fwd/libalap_gpu.so ] && export ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so
fgd=.dev/s33/gbin/forward_gpu_device
m=/tmp/alap-fwd
b=$o/ab.log
ab() {  # MODEL CTX MODE [HOW]
  for e in 0 1 0 1; do
    echo "[ALAP_GPU_FFN_FUSED=$e]" >> $b
    ALAP_GPU_FFN_FUSED=$e timeout 60 $fgd bench "$m/$1.gguf" "$2" "$3" -1 ${4:-} 2>&1 | grep -v '^device:' >> $b
  done
}
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do ab $model 1024 k8; ab $model 4096 k8; ab $model 32768 k8 nofill; done
ab llama3-8b-q4_k 4096 k8
echo "done $(at)"
awk '/^\[ALAP_GPU_FFN_FUSED=/{e=substr($0,length($0)-1,1)} /^bench /{n=split($2,a,"/"); m=a[n]; c=$4; md=$5; t=$0; sub(/.*decode /,"",t); sub(/ tok\/s.*/,"",t)}
     /calls a step/{k=$0; sub(/.*host cost: /,"",k); sub(/ calls.*/,"",k)}
     /as a graph replayed/{r=$0; sub(/.*token in the loop, /,"",r); sub(/ us as a graph.*/,"",r); print m, c, md, "fused=" e, k " calls", t, r}' $b
