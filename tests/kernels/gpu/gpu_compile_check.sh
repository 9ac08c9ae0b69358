#!/bin/sh
# Compile check of the GPU kernels without a GPU (run by ctest; exit 77 = skipped).
#   gpu_compile_check.sh hip  HIPCC REPO OUTDIR SRC...  gfx1100 and gfx1030 device assembly; the packed-K
#       attention kernels (k8/k8v8 decode, k8 prefill) must use v_dot4_i32_iu8 (gfx11 sudot4) and
#       v_dot4c_i32_i8 (gfx10.3 sdot4); the 4-row IQ4 decode kernels must look codes up by v_perm_b32.
#   gpu_compile_check.sh cuda NVCC  REPO OUTDIR SRC...  sm_90 PTX and objects; the scalar packed-K kernels
#       (head_dim other than 64/128) must use dp4a, the matrix-unit decode and prefill kernels (head_dim
#       64 and 128 on CUDA) the int8 mma m16n8k32 s8×s8→s32 for the scores (docs/kernels/gpu.md).
# Not a run-time test: nothing here is linked or executed on a device.
set -u
mode=$1 compiler=$2 repo=$3 out=$4
shift 4

if [ -z "$compiler" ] || [ ! -x "$compiler" ]; then
  echo "SKIP: $mode compiler not found ('$compiler')"
  exit 77
fi
mkdir -p "$out" || exit 1
fail=0
kernel=attn_k8_decode_kernel  # set per source and check below

# Prints the lines of one kernel's function body from an assembly (hip) or PTX (cuda) file.
kernel_body() {
  if [ "$mode" = hip ]; then
    awk -v k="$kernel" '$0 ~ "^_Z.*" k ".*:" {on = 1} on {print} on && /^\.Lfunc_end/ {exit}' "$1"
  else
    # To the next function, not to the first line starting with '}': inline PTX (cuda_fp16.h's half2
    # intrinsics) puts such lines inside a body.
    awk -v k="$kernel" 'on && /^([ \t]*\/\/ \.globl|.*\.entry |.*\.func )/ {exit} $0 ~ "\\.entry .*" k {on = 1} on {print}' "$1"
  fi
}

# require FILE PATTERN WHAT: the k8 kernel's body in FILE must contain PATTERN.
require() {
  n=$(kernel_body "$1" | grep -c "$2")
  if [ "$n" -gt 0 ]; then
    echo "ok: $3: $n x $2 in $kernel"
  else
    echo "FAIL: $3: no $2 in $kernel; its dot instructions were:"
    kernel_body "$1" | grep -o -E "v_dot[a-z0-9_]*|dp4a[a-z0-9.]*" | sort | uniq -c
    [ -n "$(kernel_body "$1")" ] || echo "  (kernel $kernel not found in $1)"
    fail=1
  fi
}

# The kernels of a source file that work on packed K and so must use dot4.
dot4_kernels() {
  case $1 in
    attn_k8) echo attn_k8_decode_kernel attn_k8v8_decode_kernel ;;
    attn_k8_prefill) echo attn_k8_prefill_kernel ;;
  esac
}

start=$(date +%s)
for src in "$@"; do
  name=$(basename "$src" .hip)
  if [ "$mode" = hip ]; then
    for arch in gfx1100 gfx1030; do
      asm="$out/$name.$arch.s"
      # -nogpulib for gfx1100: Debian lacks its device library; fine for device assembly, not
      # linkable, and its calls to the library's math (expf) assume a 16 KB stack, so only gfx1030,
      # built with its library as a real build is, tells what a kernel keeps in scratch.
      nolib=-nogpulib
      [ "$arch" = gfx1030 ] && nolib=
      if ! "$compiler" -std=c++20 --offload-arch=$arch $nolib --cuda-device-only -O3 -S \
           -I"$repo" "$src" -o "$asm" 2>"$asm.log"; then
        echo "FAIL: hipcc $arch $src:"; cat "$asm.log"; fail=1; continue
      fi
      if [ "$name" = matmul ]; then
        # The IQ4 decode looks its codes up by v_perm_b32 (gpu_lut16.h: 6 a word, 96 in the 4-row
        # kernel); the plain fallback has 40 (sorting permutes only).
        for kernel in matvec_xr_kernelILj20ELi4E matvec_xr_kernelILj23ELi4E; do
          n=$(kernel_body "$asm" | grep -c "v_perm_b32")
          if [ "$n" -ge 64 ]; then
            echo "ok: $arch (IQ4 lookup): $n x v_perm_b32 in $kernel"
          else
            echo "FAIL: $arch (IQ4 lookup): $n x v_perm_b32 in $kernel, want the byte-select lookup (>= 64)"; fail=1
          fi
        done
      fi
      if [ "$arch" = gfx1030 ]; then
        # No kernel keeps arrays in scratch memory (a round trip to memory per access): session 29
        # found the decode attention's accumulators (an array indexed where a loop did not unroll)
        # and the Q3_K / Q6_K decode windows (a select between neighbouring words folded into a
        # run-time index) there. Allowed: f16 decode with head_dim 256 and groups of 8, which needs
        # more registers than a thread has (152 bytes of spills).
        sc=$(awk '/^_Z[^ ]*:/ {k = $1} /^; ScratchSize:/ && $3 > 0 {print k, $3}' "$asm" |
             grep -v "attn_f16_decode_kernelILi256ELi8E")
        if [ -z "$sc" ]; then
          echo "ok: $arch: no scratch in the kernels of $name"
        else
          echo "FAIL: $arch: kernels of $name with scratch (bytes a thread):"; echo "$sc"; fail=1
        fi
      fi
      for kernel in $(dot4_kernels "$name"); do
        case $arch in
          gfx1100) require "$asm" v_dot4_i32_iu8 "$arch (sudot4)" ;;
          gfx1030) require "$asm" v_dot4c_i32_i8 "$arch (sdot4)" ;;
        esac
      done
    done
  else
    ptx="$out/$name.sm_90.ptx"
    if ! "$compiler" -x cu -std=c++20 -arch=sm_90 -O3 -I"$repo" -ptx "$src" -o "$ptx" 2>"$ptx.log" ||
       ! "$compiler" -x cu -std=c++20 -arch=sm_90 -O3 -I"$repo" -c "$src" -o "$out/$name.sm_90.o" 2>>"$ptx.log"; then
      echo "FAIL: nvcc sm_90 $src:"; cat "$ptx.log"; fail=1; continue
    fi
    for kernel in $(dot4_kernels "$name"); do require "$ptx" "dp4a" "sm_90 (__dp4a)"; done
    if [ "$name" = attn_k8 ]; then
      for kernel in attn_k8_decode_mma_kernel attn_k8v8_decode_mma_kernel; do
        require "$ptx" "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" "sm_90 (int8 mma)"
      done
    fi
    if [ "$name" = attn_k8_prefill ]; then  # head_dim 64/128 prefill on the matrix units (attn_prefill_mma.h)
      kernel=attn_prefill_mma_kernel
      require "$ptx" "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32" "sm_90 (int8 mma, prefill)"
    fi
  fi
done
echo "$mode compile check took $(( $(date +%s) - start )) s"
exit $fail
