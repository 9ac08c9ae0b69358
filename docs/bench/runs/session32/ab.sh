#!/bin/bash
# Session 32: the decode split by KV groups, old against new in one run.
#   OLD=<build dir of cd0acb5, the parent of 93681f4> NEW=<build dir of the commit> bash ab.sh > ab.log
# (each build dir: cmake --preset default -B DIR && ninja -C DIR alap_core_model alap_kernels).
# Builds decode_split.cpp against both trees' libraries, then alternates them (old first, then a
# second pass new first: the order check), 8 pairs a setting; prints each pair's median token time
# in us and the median ratio new/old. MODEL=... for another file; T threads (2), P prompt tokens.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
models=${MODELS:-$root/../shared/models}
wraps=""
for s in _ZN4alap10ThreadPool20parallel_for_chunkedEmmRKSt8functionIFvmmmEE \
         _ZN4alap10ThreadPool20parallel_for_indexedEmRKSt8functionIFvmmmEE \
         _ZN4alap10ThreadPool12parallel_forEmRKSt8functionIFvmmEE \
         _ZN4alap12CpuAttention3runERKNS_7KvCacheERNS_10ThreadPoolEmPKfmmmfPf; do
  wraps="$wraps -Wl,--wrap=$s"
done
for side in OLD NEW; do
  B=${!side}
  L="$B/core/model/libalap_core_model.a $B/core/gguf/libalap_core_gguf.a $B/core/runtime/libalap_core_runtime.a -ldl $B/kernels/cpu/libalap_kernels.a -lpthread"
  c++ -O3 -std=c++20 -I"$root" -I"$root/kernels/include" "$here/decode_split.cpp" -o "/tmp/s32_ds_$side" $wraps $L
done
pairs() {  # first second file threads prompt
  for i in 1 2 3 4 5 6 7 8; do
    a=$(/tmp/s32_ds_$1 "$3" "$4" 100 5 "$5" | awk '{print $2}')
    b=$(/tmp/s32_ds_$2 "$3" "$4" 100 5 "$5" | awk '{print $2}')
    if [ "$1" = OLD ]; then echo "$a $b"; else echo "$b $a"; fi
  done | python3 -c '
import sys, statistics
rs = []
for l in sys.stdin:
    o, n = map(float, l.split()); rs.append(n / o); print(f"{o:.0f}/{n:.0f}", end=" ")
print(f"\nmedian new/old {statistics.median(rs):.3f} (min {min(rs):.3f} max {max(rs):.3f})")'
}
for m in ${FILES:-q4_k_m q8_0}; do
  for p in 64 1024; do
    echo "eval $m, ${T:-2} threads, prompt $p, old first"; pairs OLD NEW "$models/alap-eval-30m-$m.gguf" "${T:-2}" $p
    echo "eval $m, ${T:-2} threads, prompt $p, new first"; pairs NEW OLD "$models/alap-eval-30m-$m.gguf" "${T:-2}" $p
  done
done
