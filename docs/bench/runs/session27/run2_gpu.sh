#!/bin/bash
# Session 27, device call 2: the forms of the IQ4 decode dot on the H200. From the repository root,
# no arguments: bash docs/bench/runs/session27/run2_gpu.sh (about 4-6 minutes). Builds from source as
# gpu_iq4.sh / run_ops_h200.sh do (nvcc sm_90, g++ for the CPU oracle), then:
#   0. SASS instruction counts of the IQ4 decode kernels per build (cuobjdump, when present);
#   1. ops_gpu_test with ALAP_TEST_TYPES=IQ4_NL,IQ4_XS on every build: the default (ALAP_IQ4_DOT=1,
#      sign-split PRMT), dot0 (the 6-PRMT nibble lookup), dot2 (1 with the shifts as mul.hi), rows8 /
#      rows2 (ALAP_IQ4_ROWS), plain (-DALAP_GPU_PLAIN_PERM) and bytesel (-DALAP_GPU_BYTE_SEL_PERM: the
#      HIP v_perm_b32 algorithm on a scalar stand-in; correct but slow, so not timed);
#   2. --bench-decode of IQ4_NL, IQ4_XS, Q4_0, Q4_K on default, dot0, dot2, rows8, rows2;
#   3. the whole ops_gpu_test on the default build;
#   4. compute-sanitizer memcheck and racecheck on --small, IQ4 types, default build.
# The last lines: a summary (graph-replayed % of copy per type, shape and build; test and sanitizer
# results). Logs in $OUT (or ./run2-gpu-out).
set -u -o pipefail
out=${OUT:-run2-gpu-out}
b=/tmp/alap-iq4-run2
mkdir -p "$out" $b
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
start=$(date +%s)
at() { echo "(at $(( $(date +%s) - start )) s)"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee "$out/machine.txt"
flags="-std=c++20 -O3 -arch=sm_90 -lineinfo -I. -Ikernels/include -Xcompiler=-Wall,-Wextra -Werror=all-warnings"
gpu_srcs="attn_k8 attn_k8_prefill kv_k8_store ops_device matmul ops_elementwise attn_f16_prefill logits_top"
# Builds other than the default: name and flags for matmul.hip and ops_elementwise.hip (the rest is shared).
names=(dot0 dot2 rows8 rows2 plain bytesel)
vflags=("-DALAP_IQ4_DOT=0" "-DALAP_IQ4_DOT=2" "-DALAP_IQ4_ROWS=8" "-DALAP_IQ4_ROWS=2" "-DALAP_GPU_PLAIN_PERM"
        "-DALAP_GPU_BYTE_SEL_PERM")
timed="default dot0 dot2 rows8 rows2"

for src in $gpu_srcs; do
  $nvcc $flags -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/$src.o > $b/$src.log 2>&1 &
done
for i in "${!names[@]}"; do
  for src in matmul ops_elementwise; do
    $nvcc $flags ${vflags[$i]} -x cu -Xptxas -v -c kernels/gpu/$src.hip -o $b/${src}_${names[$i]}.o \
      > $b/${src}_${names[$i]}.log 2>&1 &
  done
done
$nvcc $flags -DALAP_GPU_CUDA=1 -x cu -c tests/kernels/gpu/ops_gpu_test.cpp -o $b/ops_gpu_test.o \
  > $b/ops_gpu_test.log 2>&1 &
cxx="g++ -std=c++20 -O2 -ffp-contract=off -I. -Ikernels/include -Ikernels/cpu"
cpu_objs=""
for src in $(cd kernels/cpu && ls *.cpp */*.cpp | sed 's/\.cpp$//'); do
  case $src in
    avx2/*) isa="-mavx2 -mfma -mf16c" ;;
    avx_vnni/*) isa="-mavx2 -mfma -mf16c -mavxvnni" ;;
    avx512_vnni/*) isa="-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni" ;;
    *) isa="" ;;
  esac
  o=$b/cpu_$(echo $src | tr / _).o
  $cxx $isa -c kernels/cpu/$src.cpp -o $o > $o.log 2>&1 &
  cpu_objs="$cpu_objs $o"
done
g++ -std=c++20 -O2 -Wall -Wextra -I. tests/kernels/gpu/gpu_lut16_check.cpp -o $b/gpu_lut16_check > $b/lut16.log 2>&1 &
wait
cat $b/*.log > "$out/build.log"
gpu_objs=""
for src in $gpu_srcs; do gpu_objs="$gpu_objs $b/$src.o"; done
$nvcc -arch=sm_90 $b/ops_gpu_test.o $gpu_objs $cpu_objs -lpthread -o $b/test_default >> "$out/build.log" 2>&1 ||
  { echo "BUILD FAILED"; grep -E "error|undefined" "$out/build.log" | head -30; exit 1; }
for n in "${names[@]}"; do
  objs=${gpu_objs/$b\/matmul.o/$b/matmul_$n.o}
  objs=${objs/$b\/ops_elementwise.o/$b/ops_elementwise_$n.o}
  $nvcc -arch=sm_90 $b/ops_gpu_test.o $objs $cpu_objs -lpthread -o $b/test_$n >> "$out/build.log" 2>&1 ||
    echo "build $n FAILED"
done
echo "build took $(( $(date +%s) - start )) s"
grep -E "warning|error" "$out/build.log" | head
$b/gpu_lut16_check 2>&1 | tail -1 | sed 's/^/gpu_lut16_check (host): /' | tee "$out/lut16.txt"

echo "== 0. IQ4 decode kernels: SASS instructions (whole kernel) and registers $(at)"
{
  for n in default "${names[@]}"; do
    o=$b/matmul_$n.o; log=$b/matmul_$n.log
    [ $n = default ] && o=$b/matmul.o && log=$b/matmul.log
    # Registers / spills per IQ4 kernel (type ids 20 = IQ4_NL, 23 = IQ4_XS; R = rows a block).
    grep -A2 -E "Compiling entry function .*matvec_xr_kernelILj(20|23)E" $log |
      awk -v n=$n '/entry function/ {match($0, /ILj[0-9]+ELi[0-9]+E/); k = substr($0, RSTART, RLENGTH)}
        /registers/ {print n, k, "regs", $5}' > $b/regs_$n.txt
    [ -x "$cuobjdump" ] || continue
    $cuobjdump -sass $o 2>/dev/null |
      awk '/Function : /{f = $3} /^ +\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]\*\// {print f "\t" $0}' |
      grep -E "matvec_xr_kernelILj(20|23)E" > $b/sass_$n.txt
    for k in $(cut -f1 $b/sass_$n.txt | sort -u); do
      kk=$(echo $k | grep -oE 'ILj[0-9]+ELi[0-9]+E')
      printf "%-8s %-12s %-10s" $n $kk "$(grep "$kk" $b/regs_$n.txt | awk '{print "regs=" $4}' | head -1)"
      grep -F "$k" $b/sass_$n.txt | awk '{c++} / PRMT/ {p++} / IDP4A/ {d++} / LOP3/ {l++} / SHF/ {s++}
        / IMAD/ {m++} / IADD3/ {a++} END {printf " total=%d PRMT=%d IDP4A=%d LOP3=%d SHF=%d IMAD=%d IADD3=%d\n",
        c, p, d, l, s, m, a}'
    done
  done
  [ -x "$cuobjdump" ] || { echo "no cuobjdump: registers only"; cat $b/regs_*.txt; }
} 2>&1 | tee "$out/sass.txt"

echo "== 1. ops_gpu_test, ALAP_TEST_TYPES=IQ4_NL,IQ4_XS, every build $(at)"
for n in default "${names[@]}"; do
  ALAP_TEST_TYPES=IQ4_NL,IQ4_XS timeout 120 $b/test_$n > "$out/test_iq4_$n.log" 2>&1
  echo "$n rc=$? $(grep -E '^PASS|^FAIL' "$out/test_iq4_$n.log" | tail -1)" | tee -a "$out/tests.txt"
  grep -m3 -E "FAIL" "$out/test_iq4_$n.log"
done

echo "== 2. --bench-decode IQ4_NL, IQ4_XS, Q4_0, Q4_K $(at)"
for n in $timed; do
  echo "-- $n"
  ALAP_BENCH_TYPES=IQ4_NL,IQ4_XS,Q4_0,Q4_K timeout 90 $b/test_$n --bench-decode 2>&1 | tee "$out/bench_$n.log" |
    grep -E "^\| (IQ|Q)" | cut -d'|' -f2-10
done

echo "== 3. ops_gpu_test, every type, default build $(at)"
timeout 150 $b/test_default > "$out/test_all.log" 2>&1
echo "all types rc=$? $(grep -E '^PASS|^FAIL' "$out/test_all.log" | tail -1)" | tee -a "$out/tests.txt"
grep -m5 -E "FAIL" "$out/test_all.log"

echo "== 4. compute-sanitizer --small, IQ4 types, default build $(at)"
for tool in memcheck racecheck; do
  ALAP_TEST_TYPES=IQ4_NL,IQ4_XS timeout 100 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 \
    $b/test_default --small > $b/san_$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^PASS|^FAIL' $b/san_$tool.log | head -3 | tr '\n' ' ')" |
    tee -a "$out/sanitizers.txt"
  grep -m5 -E "Invalid|Race|Error" $b/san_$tool.log >> "$out/sanitizers.txt"
done

echo "== summary $(at)"
cat "$out/lut16.txt" "$out/tests.txt" "$out/sanitizers.txt"
echo "graph-replayed % of copy: type | shape | $timed"
logs=""
for n in $timed; do logs="$logs $out/bench_$n.log"; done
# shellcheck disable=SC2086
awk -F'|' '/^\| (IQ|Q)/ && NF > 12 {k = $2 "|" $3; gsub(/ /, "", k); if (!(k in seen)) {seen[k] = 1; order[m++] = k}
     v[k] = v[k] " " $10} END {for (i = 0; i < m; ++i) print order[i] v[order[i]]}' $logs | tee "$out/summary.txt"
grep -E "PRMT" "$out/sass.txt" | grep -E "ELi4E" | sed 's/^/sass /'
echo "done at $(( $(date +%s) - start )) s"
