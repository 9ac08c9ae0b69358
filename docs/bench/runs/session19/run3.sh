#!/bin/bash
# session 19 device call 3: gpu_logits_top's device time inside a graph (v2 and v1).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
for r in 1 2; do
  echo "v2:"; ./ops_gpu_test --bench-top 2>&1 | grep logits_top
  echo "v1:"; LD_LIBRARY_PATH=$PWD/v1 ./ops_gpu_test --bench-top 2>&1 | grep logits_top
done
