#!/usr/bin/env bash
# Prompts with the AMX prefill on and off (ALAP_CPU_AMX), alternating in pairs, depth 0, 1 and 2 threads.
# Usage: amx_ab.sh BUILD_DIR PROMPT_TOKENS PAIRS MODEL...
set -u
build=$1 p=$2 pairs=$3; shift 3
for m in "$@"; do
  for thr in 1 2; do
    for ((i = 0; i < pairs; ++i)); do
      for amx in on off; do
        line=$(ALAP_CPU_AMX=$amx timeout 600 "$build/bin/cpu_bench" -m "$m" --cache k8 --threads "$thr" --depth 0 -p "$p" -n 1 2>&1 | grep '^prefill')
        echo "$(basename "$m") thr $thr amx $amx: $line"
      done
    done
  done
done
