#!/bin/bash
# alternating whole-model runs: IQ4 against the type of similar bytes (session 27)
B=/work/main/build/default/bin
for r in 1 2; do
  for pair in "l1iq4xs l1q4k" "l1iq4nl l1q40" "qqiq4xs qq4k" "qqiq4nl qq40"; do
    for m in $pair; do
      for t in 1 2; do
        echo "round $r $m threads $t: $($B/cpu_bench -m /tmp/rm/$m.gguf --threads $t -p 64 -n 32 2>&1 | grep -E 'prefill|decode' | tr '\n' ' ')"
      done
    done
  done
done
