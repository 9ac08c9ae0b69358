#!/bin/bash
# Session 22, device call 1: Q8_0's packed decode read-ahead into L2 (prefetcht1) against L1
# (prefetcht0) on the H200 host's Xeon. Run from the carried folder (.dev/s22): cpu_bench_t0 (HEAD's
# kernels), cpu_bench_t1 (Q8_0's read-ahead with prefetcht1), make_random_model, all stripped.
set -u
cd .dev/s22 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)|Flags" | cut -c1-200
./make_random_model llama3.2-1b q8_0 /tmp/l1q8.gguf > /dev/null
./make_random_model qwen2.5-0.5b q8_0 /tmp/q05q8.gguf > /dev/null
one() {  # one(variant threads model binary)
  echo -n "$1 threads $2 $(basename $3) $4: "
  ALAP_CPU_VARIANT=$1 ./$4 -m $3 --cache f16 --threads $2 --depth 0 -p 4 -n 12 2>&1 | grep -E "^decode|^paired" |
    sed -E 's/.*= ([0-9.]+) ms\/token median.*/\1 ms/; s/.*median ([0-9]+)% of its floor, median probe ([0-9.]+) GB\/s.*/paired \1% probe \2/' | tr '\n' ' '
  echo
}
for round in 1 2 3; do
  echo "== round $round"
  for vt in "avx512vnni 1" "avx512vnni 8" "avxvnni 1" "avxvnni 8" "avx2 1"; do
    set -- $vt
    if [ $((round % 2)) = 1 ]; then one $1 $2 /tmp/l1q8.gguf cpu_bench_t0; one $1 $2 /tmp/l1q8.gguf cpu_bench_t1
    else one $1 $2 /tmp/l1q8.gguf cpu_bench_t1; one $1 $2 /tmp/l1q8.gguf cpu_bench_t0; fi
  done
  for t in 1 16; do
    one avx512vnni $t /tmp/q05q8.gguf cpu_bench_t0; one avx512vnni $t /tmp/q05q8.gguf cpu_bench_t1
  done
done
