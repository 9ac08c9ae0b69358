#!/bin/bash
# Session 23, device call 1: the AVX-VNNI Q4_K decode a chunk (two sub-blocks) at a time against
# a sub-block at a time, on the H200 host's Xeon (Golden Cove cores, the P-core of the Intel laptop
# CPUs that get the avxvnni kernels). Run from the carried folder (.dev/s23): cpu_bench_q4kab and
# packed_bench_ab (b5b650f + q4k_chunks_measure.patch: ALAP_AB=Q4KCH=0,1 switches the chunk path
# off (0) and on (1) token by token, A B B A ...; ALAP_AB_FLAG=0|1 sets it for a whole run; the
# patch also has the AVX-512 form of the chunk path, measured, not kept), make_random_model and
# the eval model's Q4_K_M file.
set -u
cd .dev/s23 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)" | cut -c1-200
./make_random_model llama3.2-1b q4_k /tmp/l1q4k.gguf > /dev/null
echo "== packed_bench, one thread, Q4_K: warm (256x2048, 288 KB) and cold (2048x8192), flag 0 = old, 1 = chunks"
for r in 1 2; do
  for f in 0 1; do
    for v in avxvnni avx512vnni; do
      for sh in 256x2048 2048x8192; do
        cm=0; [ $sh = 2048x8192 ] && cm=160
        [ $v = avx512vnni ] && [ $sh = 2048x8192 ] && continue
        echo -n "$v flag $f $sh run $r: "
        ALAP_AB_FLAG=$f ./packed_bench_ab --variant $v --types q4_k --shapes $sh --threads 1 --reps 7 --cold-mb $cm 2>&1 | grep -E '^Q4_K  '
      done
    done
  done
done
echo "== cpu_bench, decode tokens alternating old (0) and chunks (1)"
for v in avxvnni avx512vnni; do
  for t in 1 4 16; do
    for r in 1 2; do
      [ $v = avx512vnni ] && { [ $t = 4 ] || [ $r = 2 ]; } && continue
      echo -n "$v llama3.2-1b q4_k threads $t run $r: "
      ALAP_CPU_VARIANT=$v ALAP_AB=Q4KCH=0,1 ./cpu_bench_q4kab -m /tmp/l1q4k.gguf --threads $t -p 4 -n 30 2>&1 | grep '^AB'
      echo -n "$v eval q4_k_m threads $t run $r: "
      ALAP_CPU_VARIANT=$v ALAP_AB=Q4KCH=0,1 ./cpu_bench_q4kab -m eval-q4_k_m.gguf --threads $t -p 4 -n 200 2>&1 | grep '^AB'
    done
  done
done
