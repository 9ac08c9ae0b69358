#!/bin/bash
# Decode of two builds alternating, OLD NEW a pair: ab_decode.sh OLD_BUILD NEW_BUILD MODEL... (each build
# dir has bin/cpu_bench). cpu_bench -p 128 -n 16, k8, 1 and 2 threads, depth 0 and 1024, twice: the
# steady median ms a token and the paired floor (each token between two read probes: cold).
OLD=$1; NEW=$2; shift 2
for rep in 1 2; do
for m in "$@"; do for t in 1 2; do for d in 0 1024; do
  for side in old new; do
    B=$OLD; [ $side = new ] && B=$NEW
    r=$($B/bin/cpu_bench -m $m --cache k8 --threads $t --depth $d -p 128 -n 16 2>&1)
    dec=$(echo "$r" | grep "^decode" | sed -E 's/.*= ([0-9.]+) ms\/token median.*/\1/')
    pr=$(echo "$r" | grep "^paired" | sed -E 's/.*median ([0-9]+)% of its floor, median probe ([0-9.]+).*/\1 \2/')
    echo "$(basename $m) t$t d$d $side decode_ms $dec paired% probe $pr"
  done
done; done; done; done
