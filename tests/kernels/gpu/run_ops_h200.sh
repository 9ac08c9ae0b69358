#!/bin/bash
# One device-machine session for ops.h on the lent H200 (docs/bench/gpu.md "Forward-pass kernels"):
# builds the GPU library's sources, the CPU oracle (kernels/cpu) and ops_gpu_test with a hand-written
# nvcc/g++ command line (no cmake), runs the test, compute-sanitizer memcheck/racecheck on small
# shapes, and the benchmark (ops_gpu_test --bench). Logs go to $OUT (or ./h200-ops-out).
# Usage from the repo root: bash tests/kernels/gpu/run_ops_h200.sh
# Environment: ALAP_SKIP_SAN=1 skips the sanitizers (ALAP_SAN_VARIANTS=1 runs memcheck on the
# variant builds too), ALAP_SKIP_BENCH=1 the benchmarks (--bench, then --bench-prefill: the prefill
# kernels at the engine's products and chunks; ALAP_BENCH_PREFILL=engine|types narrows it);
# ALAP_SAN_TOOLS the sanitizer tools (default "memcheck racecheck"), ALAP_BENCH_DECODE=1 runs only
# the decode benchmark on the default build too (--bench-decode);
# ALAP_SAN_TIMEOUT bounds each sanitizer run (seconds, default 150); ALAP_VARIANT="-Dflags;-Dflags..."
# also builds matmul.hip with each set of flags and runs the test and the decode benchmark
# (--bench-decode, or --bench-prefill with ALAP_VARIANT_BENCH=prefill) on it (e.g.
# -DALAP_MV_XR_ROWS=4); a set "@DIR" builds DIR/kernels/gpu/matmul.hip
# with DIR's headers first (another version of the kernels, e.g. a copy of the last commit's, carried
# in an ignored folder); ALAP_CPU_ROOT=DIR builds the CPU oracle from DIR/kernels/cpu (e.g. the last
# commit's, while the working tree's is mid-edit); ALAP_GPU_EXPECT_BLAS (default 1: the toolkit
# has cuBLAS) makes the test fail when the library takes no BLAS. The last lines printed: graph-replayed % of copy
# per type, shape and build (the bench's second table, prefill ms per kernel, is left out).
set -u -o pipefail
out=${OUT:-h200-ops-out}
b=/tmp/alap-ops
mkdir -p "$out" $b
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  date -u +"date: %Y-%m-%d %H:%M UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  $nvcc --version | tail -2
} 2>&1 | tee "$out/machine.txt"

start=$(date +%s)
flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
gpu_srcs="attn_k8 attn_k8_prefill kv_k8_store ops_device matmul matmul_blas ops_elementwise attn_f16_prefill logits_top"
for src in $gpu_srcs; do
  $nvcc $flags -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 &
done
$nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/ops_gpu_test.cpp -o $b/ops_gpu_test.o > $b/ops_gpu_test.log 2>&1 &
IFS=';' read -r -a variants <<< "${ALAP_VARIANT:-}"
for i in "${!variants[@]}"; do
  v=${variants[$i]}
  if [ "${v#@}" != "$v" ]; then
    $nvcc -I${v#@} $flags -x cu -Xptxas -v -c ${v#@}/kernels/gpu/matmul.hip -o $b/matmul_var$i.o > $b/matmul_var$i.log 2>&1 &
  else
    $nvcc $flags $v -x cu -Xptxas -v -c kernels/gpu/matmul.hip -o $b/matmul_var$i.o > $b/matmul_var$i.log 2>&1 &
  fi
done
# The CPU oracle: alap_kernels' sources with their per-ISA flags (kernels/cpu/CMakeLists.txt).
cpu_objs=""
# ALAP_CPU_ROOT: a folder holding another kernels/cpu and kernels/include (e.g. the last commit's,
# carried in an ignored folder, while the working tree's CPU files are mid-edit by someone else).
cr=${ALAP_CPU_ROOT:-.}
cxx="g++ -std=c++20 -O2 -ffp-contract=off -I$cr -I$cr/kernels/include -I$cr/kernels/cpu"
# Every source of kernels/cpu (top level and one folder down), ISA flags by folder.
for src in $(cd $cr/kernels/cpu && ls *.cpp */*.cpp | sed 's/\.cpp$//'); do
  case $src in
    sse4/*) isa="-mssse3 -msse4.1" ;;
    avx2/*) isa="-mavx2 -mfma -mf16c" ;;
    avx_vnni/*) isa="-mavx2 -mfma -mf16c -mavxvnni" ;;
    avx512_vnni/*) isa="-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni" ;;
    *) isa="" ;;
  esac
  o=$b/cpu_$(echo $src | tr / _).o
  $cxx $isa -c $cr/kernels/cpu/$src.cpp -o $o > $o.log 2>&1 &
  cpu_objs="$cpu_objs $o"
done
wait
cat $b/*.log > "$out/build.log"
gpu_objs=""
for src in $gpu_srcs; do gpu_objs="$gpu_objs $b/$src.o"; done
$nvcc -arch=sm_90 $b/ops_gpu_test.o $gpu_objs $cpu_objs -lpthread -o $b/ops_gpu_test >> "$out/build.log" 2>&1 ||
  { echo "BUILD FAILED"; grep -E "error|undefined" "$out/build.log" | head -30; exit 1; }
echo "build took $(( $(date +%s) - start )) s"
grep -E "warning|error" "$out/build.log" | head
# Registers / spills of the weight-product kernels.
grep -A2 -E "Compiling entry function .*(matvec|matmul)" $b/matmul.log | grep -E "registers|spill" |
  awk '/spill/ {s = $5 + $9} /registers/ {print "regs", $5, "spill bytes", s}' | sort | uniq -c | tee -a "$out/build.log"

echo "== ops_gpu_test (at $(( $(date +%s) - start )) s)"
ALAP_GPU_EXPECT_BLAS=${ALAP_GPU_EXPECT_BLAS:-1} $b/ops_gpu_test > "$out/test.log" 2>&1; echo "ops_gpu_test rc=$?"
# A stand-in BLAS (fake_blas.c) that answers wrongly, then one that fails: refused by the library.
gcc -std=c11 -O2 -shared -fPIC tests/kernels/gpu/fake_blas.c -o $b/fake_blas.so
for mode in wrong fail; do
  ALAP_FAKE_BLAS=$mode ALAP_GPU_BLAS_LIBRARY=$b/fake_blas.so $b/ops_gpu_test --blas-refused > "$out/blas_refused_$mode.log" 2>&1
  echo "ops_gpu_test --blas-refused ($mode) rc=$?: $(tail -1 "$out/blas_refused_$mode.log")"
done
grep -E "FAIL|PASS|device|max error|max abs" "$out/test.log" | head -40

if [ -z "${ALAP_SKIP_BENCH:-}" ]; then
  bench_arg=--bench
  [ -z "${ALAP_BENCH_DECODE:-}" ] || bench_arg=--bench-decode
  echo "== ops_gpu_test $bench_arg (at $(( $(date +%s) - start )) s)"
  timeout 200 $b/ops_gpu_test $bench_arg 2>&1 | tee "$out/bench.log"
  if [ -z "${ALAP_BENCH_DECODE:-}" ]; then
    echo "== ops_gpu_test --bench-prefill (at $(( $(date +%s) - start )) s)"
    timeout 200 $b/ops_gpu_test --bench-prefill 2>&1 | tee "$out/bench_prefill.log"
  fi
fi

for i in "${!variants[@]}"; do
  echo "== variant ${variants[$i]} (at $(( $(date +%s) - start )) s)" | tee -a "$out/bench_variants.log"
  $nvcc -arch=sm_90 $b/ops_gpu_test.o ${gpu_objs/$b\/matmul.o/$b/matmul_var$i.o} $cpu_objs -lpthread -o $b/test_var$i >> "$out/build.log" 2>&1 ||
    { echo "variant build failed"; continue; }
  $b/test_var$i > $b/test_var.log 2>&1; echo "test rc=$? $(grep -E 'PASS|FAIL' $b/test_var.log | head -3 | tr '\n' ' ')" | tee -a "$out/bench_variants.log"
  grep "matmul: max" $b/test_var.log | tee -a "$out/bench_variants.log"
  if [ "${ALAP_VARIANT_BENCH:-}" = prefill ]; then
    [ -n "${ALAP_SKIP_BENCH:-}" ] || timeout 200 $b/test_var$i --bench-prefill 2>&1 | grep -E "^\|" >> "$out/bench_variants.log"
  else
    [ -n "${ALAP_SKIP_BENCH:-}" ] || timeout 200 $b/test_var$i --bench-decode 2>&1 | grep -E "^\|" | tee $b/bench_var$i.log >> "$out/bench_variants.log"
  fi
  if [ -z "${ALAP_SKIP_SAN:-}" ] && [ -n "${ALAP_SAN_VARIANTS:-}" ]; then
    timeout ${ALAP_SAN_TIMEOUT:-150} compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
      $b/test_var$i --small > $b/san.log 2>&1
    echo "${variants[$i]} memcheck rc=$? $(grep -E 'ERROR SUMMARY' $b/san.log)" | tee -a "$out/sanitizers.txt"
  fi
done

if [ -z "${ALAP_SKIP_SAN:-}" ]; then
  echo "== compute-sanitizer (at $(( $(date +%s) - start )) s)"
  for tool in ${ALAP_SAN_TOOLS:-memcheck racecheck}; do
    # racecheck without the vendor BLAS (a library name that opens nothing): it reports hazards inside
    # cuBLAS's own Hopper GEMM kernels (nvjet_sm90_*, session 44), not ours; matmul_blas.hip's kernels
    # use no shared memory, and memcheck runs them with cuBLAS.
    blas=${ALAP_GPU_BLAS_LIBRARY:-}; [ $tool = racecheck ] && blas=/nonexistent/no-blas.so
    ALAP_GPU_BLAS_LIBRARY=$blas timeout ${ALAP_SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $b/ops_gpu_test --small > $b/san.log 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL' $b/san.log | head -5 | tr '\n' ' ')" | tee -a "$out/sanitizers.txt"
    grep -m5 -E "Invalid|Race|Error" $b/san.log >> "$out/sanitizers.txt"
  done
fi
# Graph-replayed % of copy bandwidth: one column per build (default, then the variants).
if [ -z "${ALAP_SKIP_BENCH:-}" ]; then
  echo "== graph % of copy: default ${ALAP_VARIANT:-}"
  cp "$out/bench.log" $b/bench_default.log
  logs="$b/bench_default.log"
  for i in "${!variants[@]}"; do logs="$logs $b/bench_var$i.log"; done
  awk -F'|' '(/^\| Q|^\| IQ|^\| F|^\| BF/) && NF > 12 {k = $2 "|" $3; gsub(/ /, "", k); if (!(k in seen)) {seen[k] = 1; order[n++] = k}
       v[k] = v[k] " " $10} END {for (i = 0; i < n; ++i) print order[i] v[order[i]]}' $logs | tee "$out/summary.txt"
fi
echo "done at $(( $(date +%s) - start )) s"
