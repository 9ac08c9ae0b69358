#!/bin/sh
# The HIP build of the GPU library compiles AND links for gfx1030, the RDNA2 target whose device
# library Debian's ROCm 5.2 ships (gfx1100 links only with AMD's ROCm 6: TOOLCHAIN.md). Builds
# OUTDIR/libalap_gpu.so from every kernel source the way kernels/gpu/CMakeLists.txt does for
# ALAP_GPU=hip; tests/core/runtime's gpu_hip_gfx1030_loads then opens it with the app's loader.
#   gpu_hip_link_check.sh HIPCC REPO OUTDIR SRC...      (exit 77 = hipcc missing: skipped)
set -u
compiler=$1 repo=$2 out=$3
shift 3
if [ -z "$compiler" ] || [ ! -x "$compiler" ]; then
  echo "SKIP: hipcc not found ('$compiler')"
  exit 77
fi
mkdir -p "$out" || exit 1
rm -f "$out/libalap_gpu.so"
start=$(date +%s)
objs=""
for src in "$@"; do
  obj="$out/$(basename "$src" .hip).o"
  if ! "$compiler" -std=c++20 --offload-arch=gfx1030 -O2 -fPIC -Wall -Wextra -I"$repo" -c "$src" -o "$obj" \
       2>"$obj.log"; then
    echo "FAIL: hipcc gfx1030 $src:"; cat "$obj.log"; exit 1
  fi
  objs="$objs $obj"
done
# shellcheck disable=SC2086
if ! "$compiler" --offload-arch=gfx1030 -shared -o "$out/libalap_gpu.so" $objs 2>"$out/link.log"; then
  echo "FAIL: link:"; cat "$out/link.log"; exit 1
fi
echo "ok: $out/libalap_gpu.so linked for gfx1030 in $(( $(date +%s) - start )) s"
