#!/bin/bash
# Session 33, device call 4: with attention now a programmatic dependent, does the f16 decode step
# gain from the attention writing the Wo product's int8 activations itself (out_q8, as k8 and k8v8
# do), which session 5 measured as a loss (the Wo product, launched as attention's dependent, then
# started during it)? ALAP_GPU_F16_OUT_Q8=0 / 1 alternating; and forward_gpu_device check with it on.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin ALAP_BENCH_8B=1 timeout 300 bash tests/core/model/run_forward_h200.sh 0 > "$o/fwd.txt" 2>&1
echo "forward (default) rc=$? $(at)"; grep -E "^check:" "$o/fwd.txt"
export LD_LIBRARY_PATH=/tmp/alap-fwd:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -f /tmp/alap-fwd/libalap_gpu.so ] && export ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so
fgd=.dev/s33/gbin/forward_gpu_device
m=/tmp/alap-fwd
b=$o/ab.log
ab() {  # MODEL CTX MODE [HOW]
  for e in 0 1 0 1; do
    echo "[ALAP_GPU_F16_OUT_Q8=$e]" >> $b
    ALAP_GPU_F16_OUT_Q8=$e timeout 60 $fgd bench "$m/$1.gguf" "$2" "$3" -1 ${4:-} 2>&1 | grep -v '^device:' >> $b
  done
}
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do ab $model 1024 f16; ab $model 4096 f16; ab $model 32768 f16 nofill; done
echo "small done $(at)"
ab llama3-8b-q4_k 4096 f16; ab llama3-8b-q4_k 32768 f16 nofill
echo "8B done $(at)"
awk '/^\[ALAP_GPU_F16_OUT_Q8=/{e=substr($0,length($0)-1,1)} /^bench /{n=split($2,a,"/"); m=a[n]; c=$4; md=$5; t=$0; sub(/.*decode /,"",t); sub(/ tok\/s.*/,"",t)}
     /as a graph replayed/{r=$0; sub(/.*token in the loop, /,"",r); sub(/ us as a graph.*/,"",r); print m, c, md, "q8=" e, t, r}' $b
ALAP_GPU_F16_OUT_Q8=1 timeout 150 $fgd check > "$o/check_q8.txt" 2>&1
echo "check with f16 out_q8: rc=$? $(tail -1 "$o/check_q8.txt") $(at)"
