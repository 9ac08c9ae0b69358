#!/bin/bash
# As ab_decode.sh for large files: depth 0, -p 32 -n 8.
OLD=$1; NEW=$2; shift 2
for rep in 1 2; do
for m in "$@"; do for t in 1 2; do
  for side in old new; do
    B=$OLD; [ $side = new ] && B=$NEW
    r=$($B/bin/cpu_bench -m $m --cache k8 --threads $t --depth 0 -p 32 -n 8 2>&1)
    dec=$(echo "$r" | grep "^decode" | sed -E 's/.*= ([0-9.]+) ms\/token median.*/\1/')
    pr=$(echo "$r" | grep "^paired" | sed -E 's/.*median ([0-9]+)% of its floor, median probe ([0-9.]+).*/\1 \2/')
    echo "$(basename $m) t$t $side decode_ms $dec paired% probe $pr"
  done
done; done; done
