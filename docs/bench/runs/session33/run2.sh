#!/bin/bash
# Session 33, device call 2: decode attention always a programmatic dependent in the GPU step, the
# packed K/V row store a programmatic dependent too.
# 1. run_h200.sh: attn_gpu_test (the store + PDL attention pair bit-identical to plain), sanitizers.
# 2. run_ops_h200.sh: every ops.h kernel against the CPU oracle, sanitizers.
# 3. forward_gpu_device check (now with qwen3: the unfused RoPE + row-store path) with the default
#    (attention PDL) and with ALAP_GPU_ATTN_PDL=0.
# 4. End to end A/B, ALAP_GPU_ATTN_PDL=0 / 1 alternating: random Llama-3-8B Q4_K at 4k and 32k,
#    Qwen2.5-0.5B and Llama-3.2-1B Q4_K at 1k.
set -u -o pipefail
o=${OUT:-/tmp/out}
mkdir -p "$o"
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
OUT=$o/attn ALAP_SAN_TIMEOUT=150 timeout 300 bash tests/kernels/gpu/run_h200.sh --ctx 4096,32768 --no-prefill > "$o/attn.txt" 2>&1
echo "attn rc=$? $(at)"
grep -E "PASS|FAIL|max error|memcheck|racecheck" "$o/attn.txt" | head -8
OUT=$o/ops ALAP_SKIP_BENCH=1 ALAP_SAN_TIMEOUT=120 timeout 200 bash tests/kernels/gpu/run_ops_h200.sh > "$o/ops.txt" 2>&1
echo "ops rc=$? $(at)"
grep -E "PASS|FAIL|memcheck|racecheck" "$o/ops.txt" | head -6
OUT=$o/fwd ALAP_DEV_BIN=.dev/s33/gbin ALAP_BENCH_8B=1 timeout 200 bash tests/core/model/run_forward_h200.sh 0 > "$o/fwd.txt" 2>&1
echo "forward check rc=$? $(at)"
grep -E "^check:|FAIL" "$o/fwd.txt" | head -6
export LD_LIBRARY_PATH=/tmp/alap-fwd:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
[ -f /tmp/alap-fwd/libalap_gpu.so ] && export ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so
fgd=.dev/s33/gbin/forward_gpu_device
ALAP_GPU_ATTN_PDL=0 timeout 90 $fgd check > "$o/check_plain.txt" 2>&1
echo "check, attention launched plainly: rc=$? $(tail -1 "$o/check_plain.txt") $(at)"
m=/tmp/alap-fwd
b=$o/ab.log
ab() {  # MODEL CTX MODE [HOW]
  for e in 0 1 0 1; do
    echo "[ALAP_GPU_ATTN_PDL=$e]" >> $b
    ALAP_GPU_ATTN_PDL=$e timeout 60 $fgd bench "$m/$1.gguf" "$2" "$3" -1 ${4:-} 2>&1 | grep -v '^device:' >> $b
  done
}
for mode in k8 f16; do ab llama3-8b-q4_k 4096 $mode; ab llama3-8b-q4_k 32768 $mode nofill; done
echo "8B done $(at)"
for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do for mode in k8 f16; do ab $model 1024 $mode; done; done
echo "done $(at)"
awk '/^\[ALAP_GPU_ATTN_PDL=/{e=substr($0,19,1)} /^bench /{n=split($2,a,"/"); m=a[n]; c=$4; md=$5; t=$0; sub(/.*decode /,"",t); sub(/ tok\/s.*/,"",t)}
     /as a graph replayed/{r=$0; sub(/.*token in the loop, /,"",r); sub(/ us as a graph.*/,"",r); print m, c, md, "pdl=" e, t " tok/s", r " us replayed"}' $b
