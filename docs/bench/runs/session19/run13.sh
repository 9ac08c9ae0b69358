#!/bin/bash
# session 19 device call 13: the forward check with a second turn (its first decode step's graph
# captured during the turn's prefill) against the CPU.
cd "$(dirname "$0")"
export ALAP_GPU_LIBRARY=$PWD/libalap_gpu.so
export LD_LIBRARY_PATH=$PWD
timeout 250 ./fgd check 2>&1 | tail -40
