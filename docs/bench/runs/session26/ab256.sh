#!/usr/bin/env bash
# The 256-bit kernels (ALAP_CPU_VARIANT=avx2 / avxvnni) on packed F16: before/after, and the ramp.
B=./build/default/bin/cpu_bench
for v in avx2 avxvnni; do
 for spec in "/tmp/rm/l1f16.gguf 16 8" "/work/shared/models/alap-eval-30m-f16.gguf 64 48"; do
  set -- $spec; M=$1; P=$2; N=$3
  for t in 1 2; do
   for s in before after; do
    skip=none; [[ $s == before ]] && skip=f16
    echo -n "$v $(basename $M) t$t $s: "
    ALAP_CPU_VARIANT=$v ALAP_CPU_PACK_SKIP=$skip $B -m $M --threads $t -p $P -n $N 2>&1 | grep -E '^(prefill|decode|paired)' |
      sed -E 's/^prefill +([0-9]+) tokens: ([0-9.]+) tok\/s.*/P \2 tok\/s/; s/^decode.*= ([0-9.]+) ms\/token median.*/D \1 ms/; s/^paired.*median ([0-9]+%) of its floor.*/paired \1/' | tr '\n' ' '
    echo
   done
   echo -n "$v $(basename $M) t$t ab: "; ALAP_CPU_VARIANT=$v $B -m $M --threads $t -p 0 -n $((N*2)) --read-ahead-ab 2>&1 | grep "read-ahead ab"
  done
 done
done
