#!/bin/bash
M=/work/shared/models/alap-eval-30m-f16.gguf
for depth in 0 1024; do for th in 1 2; do for r in 1 2 3 4; do
  for b in old new; do
    v=$(/tmp/s20/cpu_bench_$b -m $M --threads $th --depth $depth --cache f16 -p 512 -n 1 2>&1 | grep -o 'prefill 512 tokens: [0-9.]* tok/s' | sed 's/.*: //; s/ tok.s//')
    echo "$depth $th $r $b $v"
  done
done; done; done
