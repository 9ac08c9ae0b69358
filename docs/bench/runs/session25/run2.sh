#!/bin/bash
# Session 25, device call 2 (the H200 host's Xeon CPU only): packed Q4_1 and Q5_1 on Intel.
# kernels_cpu_test under every variant (the same source as here, on Golden Cove cores);
# packed_bench unpacked / packed; a random Qwen2.5-0.5B Q4_1 and Q5_1 model with the type left in
# the file's layout (ALAP_CPU_PACK_SKIP, as before this session) against packed, alternating.
set -u
cd .dev/s25 || exit 1
lscpu | grep -E "Model name|^CPU\(s\)|Vendor" | cut -c1-200
for v in avx512vnni avxvnni avx2 scalar; do
  echo -n "kernels_cpu_test $v: "; ALAP_CPU_VARIANT=$v ./kernels_cpu_test 2>&1 | tail -1
done
./packed_bench --types q4_0,q4_1,q5_0,q5_1 --shapes 896x896,4864x896 --threads 1,2 --reps 3 2>&1 | grep -E '^Q.*\||probe'
./make_random_model qwen2.5-0.5b q4_1 /tmp/qwen-q4_1.gguf > /dev/null
./make_random_model qwen2.5-0.5b q5_1 /tmp/qwen-q5_1.gguf > /dev/null
for m in q4_1 q5_1; do
  for t in 1 4; do
    for v in avx512vnni avxvnni; do
      for side in before after; do
        echo -n "$m t$t $v $side: "
        if [ $side = before ]; then skip=$m; else skip=none; fi
        ALAP_CPU_PACK_SKIP=$skip ALAP_CPU_VARIANT=$v ./cpu_bench -m /tmp/qwen-$m.gguf --threads $t -p 64 -n 12 2>&1 |
          grep -E '^(prefill|decode|paired)' |
          sed -E 's/^prefill +([0-9]+) tokens: ([0-9.]+) tok\/s.*/P \2 tok\/s/; s/^decode.*= ([0-9.]+) ms\/token median.*/D \1 ms/; s/^paired.*median ([0-9]+%) of its floor.*/paired \1/' |
          tr '\n' ' '
        echo
      done
    done
  done
done
