#!/bin/bash
# attn_ab: the CPU decode attention kernels of two source trees (e.g. a worktree of the old commit
# and this checkout) timed in one process, alternating, with a bit-for-bit check of their outputs
# (tests/bench/attn_ab/main.cpp says what it prints). Each tree's kernels/cpu is compiled with its
# top namespace renamed (-Dalap=alap_old / alap_new), so both link into one program. GCC, x86-64.
#
#   tests/bench/attn_ab.sh OLD_TREE NEW_TREE VARIANT ROUNDS [GROUP_HEADS HEAD_DIM MODES]
#
# e.g. git worktree add /tmp/old 4e8e947; tests/bench/attn_ab.sh /tmp/old . avx2 100 4 64
# Builds into ${ATTN_AB_DIR:-/tmp/attn_ab}; a measurement tool, not a test (run it on a quiet machine).
set -eu -o pipefail
[ $# -ge 4 ] || { sed -n '2,9p' "$0"; exit 2; }
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd) here=$(cd "$(dirname "$0")/attn_ab" && pwd)
shift 2
dir=${ATTN_AB_DIR:-/tmp/attn_ab}
mkdir -p "$dir"
flags="-O3 -DNDEBUG -ffp-contract=off -std=c++20"
build_side() {  # TREE NS
  local tree=$1 ns=$2 out=$dir/$2
  rm -rf "$out" && mkdir -p "$out"
  (cd "$tree/kernels/cpu" && ls *.cpp */*.cpp) | while read -r f; do
    case $f in
      sse4/*) isa="-mssse3 -msse4.1" ;;
      avx2/*) isa="-mavx2 -mfma -mf16c" ;;
      avx_vnni/*) isa="-mavx2 -mfma -mf16c -mavxvnni" ;;
      avx512_vnni/*) isa="-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512vnni" ;;
      *) isa="" ;;
    esac
    echo "g++ $flags $isa -Dalap=$ns -I$tree/kernels/include -I$tree/kernels/cpu -c $tree/kernels/cpu/$f -o $out/${f//\//_}.o"
  done | xargs -P "$(nproc)" -I{} sh -c "{}"
  ar rcs "$out/libkernels.a" "$out"/*.o
  g++ $flags -mf16c -Dalap=$ns -DAB_SIDE="${ns#alap_}" -I"$tree/kernels/include" -I"$here" -c "$here/side.cpp" -o "$out/side.o"
}
build_side "$old" alap_old
build_side "$new" alap_new
g++ $flags -mf16c -I"$here" -c "$here/main.cpp" -o "$dir/main.o"
g++ "$dir/main.o" "$dir/alap_old/side.o" "$dir/alap_new/side.o" "$dir/alap_old/libkernels.a" "$dir/alap_new/libkernels.a" \
  -o "$dir/attn_ab"
exec "$dir/attn_ab" "$@"
