#!/bin/bash
# session 19 device call 10: graphs of small kernels queued against launched on an idle stream.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
for r in 1 2; do ./ops_gpu_test --bench-graph 2>&1 | grep graph; ALAP_GPU_PDL=0 ./ops_gpu_test --bench-graph 2>&1 | grep graph | sed "s/^/pdl off: /"; done
