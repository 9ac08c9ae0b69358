#!/usr/bin/env bash
# Whole-model prefill at depth, the build before the AMX prompt attention (OLD) against this one
# (NEW), alternating OLD NEW OLD NEW in each row; both with the AMX products (ALAP_CPU_AMX on).
# usage: attn_ab.sh OLD_BUILD NEW_BUILD "DEPTHS" "CACHES" "THREADS" MODEL...
set -u
old=$1 new=$2 depths=$3 caches=$4 threads=$5
shift 5
for m in "$@"; do
  for d in $depths; do
    for c in $caches; do
      for t in $threads; do
        line="$(basename "$m") depth $d cache $c threads $t:"
        for b in "$old" "$new" "$old" "$new"; do
          r=$(ALAP_CPU_AMX=on "$b/bin/cpu_bench" -m "$m" --cache "$c" --threads "$t" --depth "$d" -p 128 -n 1 2>&1 |
              sed -n 's/^prefill 128 tokens: \([0-9.]*\) tok\/s.*/\1/p')
          line="$line $r"
        done
        echo "$line"
      done
    done
  done
done
