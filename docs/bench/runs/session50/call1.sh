#!/bin/bash
# Session 50, device call 1: the H200 host's Xeon (Intel). Read-ahead into L2 (prefetcht1) for the
# super-block types' one-token passes, against HEAD's prefetcht0. Carried: .dev/s50/bin (stripped
# builds: pb_old / cb_old = HEAD a18ea61's packed_bench / cpu_bench, pb_new / cb_new = the same
# with the change; make_random_model). Old and new alternate within each round.
set -u
B=.dev/s50/bin
exec > "$OUT/call1.log" 2>&1
date -u; lscpu | grep -E "Model name|^CPU\(s\)|L3|NUMA node\(s\)"; nproc
for vt in avx512vnni:1 avx512vnni:4 avxvnni:1 avxvnni:4 avx2:1; do
  v=${vt%:*} t=${vt#*:}
  {
    for r in 1 2; do
      for side in old new; do
        echo "== $v t$t r$r $side"
        $B/pb_$side --types q4_k,q6_k,q3_k,q2_k --shapes 4096x8192 --threads $t --reps 5 \
          --cold-mb 320 --variant $v 2>&1 | grep -E "probe|^(Q|IQ)" | grep -v done
      done
    done
  }
done
date -u
mkdir -p /tmp/rm
$B/make_random_model llama3.2-1b q4_k /tmp/rm/l1q4k.gguf > /dev/null
for v in avx512vnni avxvnni; do
  for t in 1 4; do
    for r in 1 2; do
      for side in old new; do
        echo "== cpu_bench $v t$t r$r $side"
        ALAP_CPU_VARIANT=$v $B/cb_$side -m /tmp/rm/l1q4k.gguf --cache k8 --threads $t --depth 0 -p 16 -n 16 2>&1 |
          grep -E "^decode|^paired"
      done
    done
  done
done
date -u
