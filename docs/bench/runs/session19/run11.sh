#!/bin/bash
# session 19 device call 11: does ending a capture (an update in place) wait for the device?
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
./ops_gpu_test --bench-graph 2>&1 | grep -E "graph|update"
