#!/bin/bash
# One device-machine session for the GPU forward pass (docs/bench/gpu.md "End-to-end on the GPU"):
# the fused ops and graphs of ops.h (ops_gpu_test --fused), logits of GpuForward against the CPU
# forward pass on random-weight models (forward_gpu_device check), then end-to-end tokens/s for
# random-weight models of Qwen2.5-0.5B and Llama-3.2-1B shape (make_random_model) in Q4_K and Q8_0:
# at 4k with a real prefill, f16 and k8, decode with graphs and with plain launches; at 32k decode
# only (the cache taken as filled: forward_gpu_device bench ... nofill).
# Uses binaries built on the development machine and carried in $ALAP_DEV_BIN (default
# build/gpustep-dev: forward_gpu_device, make_random_model, ops_gpu_test, libalap_gpu.so); when the
# carried library does not load it builds kernels/gpu/*.hip here with nvcc. Logs go to $OUT.
# Usage from the repo root: bash tests/core/model/run_forward_h200.sh [seconds budget, default 300]
# ALAP_BENCH_QUICK=1: only the Q4_K models at 4k and 32k; ALAP_BENCH_8B=1: first a random Llama-3-8B
# shape in Q4_K (4.6 GB) at 4k and 32k; ALAP_BENCH_ENVS: see run_bench.
set -u -o pipefail
out=${OUT:-h200-out}
budget=${1:-300}
mkdir -p "$out" /tmp/alap-fwd
bin=${ALAP_DEV_BIN:-build/gpustep-dev}
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
{
  date -u +"date: %Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nproc
} 2>&1 | tee "$out/machine.txt"
export LD_LIBRARY_PATH=$PWD/$bin:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export ALAP_GPU_LIBRARY=$PWD/$bin/libalap_gpu.so
if ! "$bin/forward_gpu_device" probe 2>&1 | tee -a "$out/machine.txt"; then
  echo "carried library does not load; building kernels/gpu here"
  objs=""
  for src in $(ls kernels/gpu/*.hip); do
    o=/tmp/alap-fwd/$(basename "$src" .hip).o
    nvcc -std=c++20 -O3 -arch=sm_90 -Xcompiler=-fPIC -I. -x cu -c "$src" -o "$o" > "$o.log" 2>&1 &
    objs="$objs $o"
  done
  wait
  nvcc -shared -arch=sm_90 $objs -o /tmp/alap-fwd/libalap_gpu.so -lcudart 2>&1 | tail -5
  export ALAP_GPU_LIBRARY=/tmp/alap-fwd/libalap_gpu.so
  export LD_LIBRARY_PATH=/tmp/alap-fwd:$LD_LIBRARY_PATH
  "$bin/forward_gpu_device" probe || { cat /tmp/alap-fwd/*.log | tail -20; exit 1; }
fi

# Bench models, written in the background while the checks run.
m=/tmp/alap-fwd
specs=("qwen2.5-0.5b q4_k" "qwen2.5-0.5b q8_0" "llama3.2-1b q4_k" "llama3.2-1b q8_0")
[ -n "${ALAP_BENCH_8B:-}" ] && specs+=("llama3-8b q4_k")
for spec in "${specs[@]}"; do
  set -- $spec
  "$bin/make_random_model" "$1" "$2" "$m/$1-$2.gguf" > "$m/$1-$2.log" 2>&1 &
done

echo "== ops_gpu_test --fused (at $(elapsed) s)"
timeout 30 "$bin/ops_gpu_test" --fused 2>&1 | tee "$out/ops.log"
echo "ops rc=$? (at $(elapsed) s)"
echo "== check (at $(elapsed) s)"
timeout 120 "$bin/forward_gpu_device" check 2>&1 | tee "$out/check.log"
echo "check rc=$? (at $(elapsed) s)"
wait

# ALAP_BENCH_ENVS="ALAP_GPU_PDL=0;ALAP_GPU_PDL=1": each bench once under each setting, in turn.
IFS=';' read -r -a bench_envs <<< "${ALAP_BENCH_ENVS:-}"
[ ${#bench_envs[@]} -eq 0 ] && bench_envs=("")
run_bench() {  # MODEL CTX MODE [LAYERS HOW]
  if [ "$(elapsed)" -gt "$budget" ]; then echo "skipped $* (budget)" | tee -a "$out/bench.log"; return; fi
  for e in "${bench_envs[@]}"; do
    [ -n "$e" ] && echo "[$e]" | tee -a "$out/bench.log"
    env $e timeout 30 "$bin/forward_gpu_device" bench "$m/$1.gguf" "${@:2}" 2>&1 | grep -v '^device:' | tee -a "$out/bench.log"
  done
}
echo "== bench (at $(elapsed) s)"
if [ -n "${ALAP_BENCH_8B:-}" ]; then  # Llama-3-8B shape first: the products dominate its step
  for mode in f16 k8; do run_bench llama3-8b-q4_k 4096 $mode -1; run_bench llama3-8b-q4_k 32768 $mode -1 nofill; done
fi
if [ -n "${ALAP_BENCH_QUICK:-}" ]; then  # Q4_K only: 4k and 32k, f16 and k8, graphs
  for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
    for mode in f16 k8; do run_bench $model 4096 $mode -1; run_bench $model 32768 $mode -1 nofill; done
  done
else
  # Most telling first (a budget cut drops the tail): Q4_K at 4k, then 32k decode, then Q8_0.
  for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
    for mode in f16 k8; do
      run_bench $model 4096 $mode -1
      run_bench $model 4096 $mode -1 plain
    done
  done
  for model in qwen2.5-0.5b-q4_k llama3.2-1b-q4_k; do
    for mode in f16 k8; do run_bench $model 32768 $mode -1 nofill; done
  done
  run_bench qwen2.5-0.5b-q4_k 32768 k8 -1 plain-nofill
  for model in qwen2.5-0.5b-q8_0 llama3.2-1b-q8_0; do
    for mode in f16 k8; do
      run_bench $model 4096 $mode -1
      run_bench $model 4096 $mode -1 plain
    done
  done
  for model in qwen2.5-0.5b-q8_0 llama3.2-1b-q8_0; do
    for mode in f16 k8; do run_bench $model 32768 $mode -1 nofill; done
  done
fi
echo "done at $(elapsed) s"
grep -E "FAIL|failure" "$out/ops.log" "$out/check.log"
sed -E 's/^bench \/tmp\/alap-fwd\///' "$out/bench.log"
