#!/bin/bash
# Session 26, device call 2 (the H200 host's Xeon CPU only): packed F16 at the final commit, where
# prefill converts a whole run of four in one pass (ecde074; call 1 ran before it). kernels_cpu_test
# under every variant; random Qwen2.5-0.5B and Llama-3.2-1B f16, the file's layout
# (ALAP_CPU_PACK_SKIP=f16) against packed, alternating, two rounds, prefill of 64 tokens.
set -u
cd .dev/s26/bin || exit 1
lscpu | grep -E "Model name|^CPU\(s\)|Vendor" | cut -c1-200
for v in avx512vnni avxvnni avx2 scalar; do
  echo -n "kernels_cpu_test $v: "; ALAP_CPU_VARIANT=$v ./kernels_cpu_test 2>&1 | tail -1
done
./make_random_model qwen2.5-0.5b f16 /tmp/qwen-f16.gguf > /dev/null
./make_random_model llama3.2-1b f16 /tmp/llama-f16.gguf > /dev/null
one() {  # label, then the env and the cpu_bench arguments
  local label=$1; shift
  echo -n "$label: "
  env "$@" 2>&1 | grep -E '^(prefill|decode|paired)' |
    sed -E 's/^prefill +([0-9]+) tokens: ([0-9.]+) tok\/s.*/P \2 tok\/s/; s/^decode.*= ([0-9.]+) ms\/token median.*/D \1 ms/; s/^paired.*median ([0-9]+%) of its floor, median probe ([0-9.]+ GB\/s).*/paired \1 (probe \2)/' |
    tr '\n' ' '
  echo
}
for round in 1 2; do
  for m in qwen llama; do
    for t in 1 4; do
      for v in avx512vnni avxvnni; do
        for side in before after; do
          if [ $side = before ]; then skip=f16; else skip=none; fi
          one "r$round $m t$t $v $side" ALAP_CPU_PACK_SKIP=$skip ALAP_CPU_VARIANT=$v ./cpu_bench -m /tmp/$m-f16.gguf --threads $t -p 64 -n 6
        done
      done
    done
  done
done
