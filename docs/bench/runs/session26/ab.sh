#!/usr/bin/env bash
# before (ALAP_CPU_PACK_SKIP=f16,bf16: the file's layout) against after (packed runs of four), alternating
B=${B:-./build/default/bin/cpu_bench}
run() { # label env... -- args
  local label=$1; shift
  local out; out=$(env "$@" 2>&1)
  local pre=$(echo "$out" | grep -oE "^prefill +[0-9]+ tokens: [0-9.]+ tok/s" | grep -oE "[0-9.]+ tok/s")
  local dec=$(echo "$out" | grep -oE "= [0-9.]+ ms/token median" | grep -oE "[0-9.]+")
  local par=$(echo "$out" | grep -oE "median [0-9]+% of its floor, median probe [0-9.]+ GB/s")
  echo "$label | prefill $pre | decode $dec ms | paired $par"
}
for round in 1 2; do
 for spec in "/work/shared/models/alap-eval-30m-f16.gguf 64 48" "/tmp/rm/l1f16.gguf 16 8" "/tmp/rm/l1bf16.gguf 16 8" "/tmp/rm/qqf16.gguf 32 16"; do
  set -- $spec; M=$1; P=$2; N=$3
  for t in 1 2; do
   for s in before after; do
    skip=none; [[ $s == before ]] && skip=f16,bf16
    run "r$round $(basename $M) t$t $s" ALAP_CPU_PACK_SKIP=$skip $B -m $M --threads $t -p $P -n $N
   done
  done
 done
done
