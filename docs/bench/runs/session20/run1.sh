#!/bin/bash
# session 20 device call 1: (host CPU) the plain-weight prefill tiles of AVX-512 and AVX2 checked
# (kernels_cpu_test, every variant) and timed against main's (mm_old = 4c54140's kernels library,
# mm_new = this tree's); (GPU) where a Llama-3-8B-shaped Q4_K decode step goes, kernel by kernel
# (ncu, durations only), beside the decode products' bench.
cd "$(dirname "$0")"
date -u
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
lscpu | grep -E 'Model name|^CPU\(s\)|L2|L3'
nvidia-smi -L
timeout 300 ./kernels_cpu_test 2>&1 | tail -3
for v in avx512vnni avx2; do
  for s in "512 512 512" "1408 512 512" "512 1408 512" "2048 2048 256" "8192 2048 128" "2048 8192 128" "4096 4096 64"; do
    for r in 1 2 3; do
      echo "$v old $(ALAP_CPU_VARIANT=$v ./mm_old $s)"
      echo "$v new $(ALAP_CPU_VARIANT=$v ./mm_new $s)"
    done
  done
done
date -u
./make_random_model llama3-8b q4_k /tmp/l8.gguf > /dev/null
./make_random_model qwen2.5-0.5b q4_k /tmp/q05.gguf > /dev/null
for m in l8 q05; do
  out=$(./fgd bench /tmp/$m.gguf 4096 k8 -1 nofill 2>&1)
  echo "$m $(echo "$out" | grep -o 'decode [0-9.]* tok/s')"; echo "$out" | grep -E 'a step:|a graph step'
done
date -u
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for m in l8 q05; do
  timeout 200 $NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --print-units base \
    --launch-count 1800 ./fgd bench /tmp/$m.gguf 4096 k8 -1 nofill > $OUT/ncu_$m.csv 2> $OUT/ncu_$m.err
  echo "ncu $m rc=$? lines $(wc -l < $OUT/ncu_$m.csv)"
done
date -u
timeout 150 ./ops_gpu_test --bench-decode 2>&1 | tail -40
date -u
