// The one GPU portability header: maps the few runtime calls and device intrinsics our kernels use
// to HIP (hipcc, AMD) or CUDA (nvcc, NVIDIA) under one alap_gpu_* / alap_* spelling.
// Not a general HIP-on-CUDA layer: add a mapping here only when a kernel needs it.
//
// Backend choice: HIP when compiled by hipcc/clang in HIP mode (__HIP__) or when ALAP_GPU_HIP is
// defined (host-only C++ using the HIP runtime API); CUDA when compiled by nvcc (__CUDACC__) or when
// ALAP_GPU_CUDA is defined (host-only C++ using the CUDA runtime API). Device helpers (dot4, shuffles,
// fp16 conversions) exist only in device-capable compiles.
//
// Why not Debian's hip/nvidia_detail: it does not compile with CUDA 13 (TOOLCHAIN.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#if defined(__HIP__) || defined(__HIPCC__) || defined(ALAP_GPU_HIP)
#define ALAP_GPU_BACKEND_HIP 1
#if !defined(__HIP_PLATFORM_AMD__) && !defined(__HIP_PLATFORM_HCC__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#else
#include <hip/hip_runtime_api.h>
#endif
#elif defined(__CUDACC__) || defined(ALAP_GPU_CUDA)
#define ALAP_GPU_BACKEND_CUDA 1
#include <cuda_runtime_api.h>
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif
#else
#error "gpu_port.h: compile with hipcc or nvcc, or define ALAP_GPU_HIP / ALAP_GPU_CUDA for host-only code"
#endif

#if defined(__HIP__) || defined(__CUDACC__)
#define ALAP_GPU_DEVICE_COMPILE 1
#endif

// ---------------------------------------------------------------------------------------------
// Runtime: types, constants and calls (host side).
// ---------------------------------------------------------------------------------------------
#if defined(ALAP_GPU_BACKEND_HIP)
using alap_gpu_error_t = hipError_t;
using alap_gpu_stream_t = hipStream_t;
using alap_gpu_event_t = hipEvent_t;
using alap_gpu_device_prop_t = hipDeviceProp_t;
using alap_gpu_memcpy_kind_t = hipMemcpyKind;
inline constexpr alap_gpu_error_t alap_gpu_success = hipSuccess;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_h2d = hipMemcpyHostToDevice;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_d2h = hipMemcpyDeviceToHost;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_d2d = hipMemcpyDeviceToDevice;
#define ALAP_GPU_RT(cuda_name, hip_name) hip_name
#else
using alap_gpu_error_t = cudaError_t;
using alap_gpu_stream_t = cudaStream_t;
using alap_gpu_event_t = cudaEvent_t;
using alap_gpu_device_prop_t = cudaDeviceProp;
using alap_gpu_memcpy_kind_t = cudaMemcpyKind;
inline constexpr alap_gpu_error_t alap_gpu_success = cudaSuccess;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_h2d = cudaMemcpyHostToDevice;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_d2h = cudaMemcpyDeviceToHost;
inline constexpr alap_gpu_memcpy_kind_t alap_gpu_memcpy_d2d = cudaMemcpyDeviceToDevice;
#define ALAP_GPU_RT(cuda_name, hip_name) cuda_name
#endif

template <class T>
inline alap_gpu_error_t alap_gpu_malloc(T** ptr, size_t bytes) {
  return ALAP_GPU_RT(cudaMalloc, hipMalloc)(reinterpret_cast<void**>(ptr), bytes);
}
inline alap_gpu_error_t alap_gpu_free(void* ptr) { return ALAP_GPU_RT(cudaFree, hipFree)(ptr); }
inline alap_gpu_error_t alap_gpu_host_malloc(void** ptr, size_t bytes) {
#if defined(ALAP_GPU_BACKEND_HIP)
  return hipHostMalloc(ptr, bytes, hipHostMallocDefault);
#else
  return cudaHostAlloc(ptr, bytes, cudaHostAllocDefault);
#endif
}
inline alap_gpu_error_t alap_gpu_host_free(void* ptr) { return ALAP_GPU_RT(cudaFreeHost, hipHostFree)(ptr); }
inline alap_gpu_error_t alap_gpu_memcpy(void* dst, const void* src, size_t bytes, alap_gpu_memcpy_kind_t kind) {
  return ALAP_GPU_RT(cudaMemcpy, hipMemcpy)(dst, src, bytes, kind);
}
inline alap_gpu_error_t alap_gpu_memcpy_async(void* dst, const void* src, size_t bytes, alap_gpu_memcpy_kind_t kind,
                                              alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaMemcpyAsync, hipMemcpyAsync)(dst, src, bytes, kind, stream);
}
inline alap_gpu_error_t alap_gpu_memset(void* dst, int value, size_t bytes) {
  return ALAP_GPU_RT(cudaMemset, hipMemset)(dst, value, bytes);
}
inline alap_gpu_error_t alap_gpu_memset_async(void* dst, int value, size_t bytes, alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaMemsetAsync, hipMemsetAsync)(dst, value, bytes, stream);
}
inline alap_gpu_error_t alap_gpu_stream_create(alap_gpu_stream_t* stream) {
  return ALAP_GPU_RT(cudaStreamCreate, hipStreamCreate)(stream);
}
inline alap_gpu_error_t alap_gpu_stream_destroy(alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaStreamDestroy, hipStreamDestroy)(stream);
}
inline alap_gpu_error_t alap_gpu_stream_synchronize(alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaStreamSynchronize, hipStreamSynchronize)(stream);
}
inline alap_gpu_error_t alap_gpu_event_create(alap_gpu_event_t* event) {
  return ALAP_GPU_RT(cudaEventCreate, hipEventCreate)(event);
}
inline alap_gpu_error_t alap_gpu_event_destroy(alap_gpu_event_t event) {
  return ALAP_GPU_RT(cudaEventDestroy, hipEventDestroy)(event);
}
inline alap_gpu_error_t alap_gpu_event_record(alap_gpu_event_t event, alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaEventRecord, hipEventRecord)(event, stream);
}
inline alap_gpu_error_t alap_gpu_event_synchronize(alap_gpu_event_t event) {
  return ALAP_GPU_RT(cudaEventSynchronize, hipEventSynchronize)(event);
}
inline alap_gpu_error_t alap_gpu_event_elapsed_ms(float* ms, alap_gpu_event_t start, alap_gpu_event_t stop) {
  return ALAP_GPU_RT(cudaEventElapsedTime, hipEventElapsedTime)(ms, start, stop);
}
inline alap_gpu_error_t alap_gpu_device_synchronize() {
  return ALAP_GPU_RT(cudaDeviceSynchronize, hipDeviceSynchronize)();
}
inline alap_gpu_error_t alap_gpu_get_last_error() { return ALAP_GPU_RT(cudaGetLastError, hipGetLastError)(); }
inline const char* alap_gpu_error_string(alap_gpu_error_t err) {
  return ALAP_GPU_RT(cudaGetErrorString, hipGetErrorString)(err);
}
inline alap_gpu_error_t alap_gpu_get_device_count(int* count) {
  return ALAP_GPU_RT(cudaGetDeviceCount, hipGetDeviceCount)(count);
}
inline alap_gpu_error_t alap_gpu_get_device(int* device) { return ALAP_GPU_RT(cudaGetDevice, hipGetDevice)(device); }
inline alap_gpu_error_t alap_gpu_set_device(int device) { return ALAP_GPU_RT(cudaSetDevice, hipSetDevice)(device); }
inline alap_gpu_error_t alap_gpu_get_device_properties(alap_gpu_device_prop_t* prop, int device) {
  return ALAP_GPU_RT(cudaGetDeviceProperties, hipGetDeviceProperties)(prop, device);
}
// Number of multiprocessors (CUDA SMs / AMD CUs) of a device: sizes the flash-decoding split.
inline alap_gpu_error_t alap_gpu_multiprocessor_count(int* count, int device) {
  return ALAP_GPU_RT(cudaDeviceGetAttribute, hipDeviceGetAttribute)(
      count, ALAP_GPU_RT(cudaDevAttrMultiProcessorCount, hipDeviceAttributeMultiprocessorCount), device);
}
inline alap_gpu_error_t alap_gpu_mem_get_info(size_t* free_bytes, size_t* total_bytes) {
  return ALAP_GPU_RT(cudaMemGetInfo, hipMemGetInfo)(free_bytes, total_bytes);
}

// Blocks of `kernel` that fit on one multiprocessor at once: sizes the flash-decoding grid so that
// every block is resident (no second wave). Device-capable compiles only (takes a kernel symbol).
#if defined(__HIP__) || defined(__CUDACC__)
template <class Kernel>
inline alap_gpu_error_t alap_gpu_occupancy(int* blocks, Kernel kernel, int threads, size_t dynamic_smem) {
  return ALAP_GPU_RT(cudaOccupancyMaxActiveBlocksPerMultiprocessor, hipOccupancyMaxActiveBlocksPerMultiprocessor)(
      blocks, kernel, threads, dynamic_smem);
}
// Lets `kernel` take more than 48 KB of dynamic shared memory.
template <class Kernel>
inline alap_gpu_error_t alap_gpu_set_max_dynamic_smem(Kernel kernel, size_t bytes) {
#if defined(ALAP_GPU_BACKEND_HIP)
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
#else
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
#endif
}
#endif

// Graphs (benchmarks capture many launches and replay them, which leaves host launch cost out).
#if defined(ALAP_GPU_BACKEND_HIP)
using alap_gpu_graph_t = hipGraph_t;
using alap_gpu_graph_exec_t = hipGraphExec_t;
#else
using alap_gpu_graph_t = cudaGraph_t;
using alap_gpu_graph_exec_t = cudaGraphExec_t;
#endif
inline alap_gpu_error_t alap_gpu_stream_begin_capture(alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaStreamBeginCapture, hipStreamBeginCapture)(
      stream, ALAP_GPU_RT(cudaStreamCaptureModeThreadLocal, hipStreamCaptureModeThreadLocal));
}
inline alap_gpu_error_t alap_gpu_stream_end_capture(alap_gpu_stream_t stream, alap_gpu_graph_t* graph) {
  return ALAP_GPU_RT(cudaStreamEndCapture, hipStreamEndCapture)(stream, graph);
}
inline alap_gpu_error_t alap_gpu_graph_instantiate(alap_gpu_graph_exec_t* exec, alap_gpu_graph_t graph) {
#if defined(ALAP_GPU_BACKEND_HIP)
  return hipGraphInstantiate(exec, graph, nullptr, nullptr, 0);
#else
  return cudaGraphInstantiate(exec, graph, 0);
#endif
}
inline alap_gpu_error_t alap_gpu_graph_launch(alap_gpu_graph_exec_t exec, alap_gpu_stream_t stream) {
  return ALAP_GPU_RT(cudaGraphLaunch, hipGraphLaunch)(exec, stream);
}
inline alap_gpu_error_t alap_gpu_graph_destroy(alap_gpu_graph_t graph) {
  return ALAP_GPU_RT(cudaGraphDestroy, hipGraphDestroy)(graph);
}
inline alap_gpu_error_t alap_gpu_graph_exec_destroy(alap_gpu_graph_exec_t exec) {
  return ALAP_GPU_RT(cudaGraphExecDestroy, hipGraphExecDestroy)(exec);
}

// Throws std::runtime_error("file:line: call: runtime error string") when a runtime call fails.
inline void alap_gpu_check(alap_gpu_error_t err, const char* what, const char* file, int line) {
  if (err == alap_gpu_success) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                           alap_gpu_error_string(err));
}
#define ALAP_GPU_CHECK(call) alap_gpu_check((call), #call, __FILE__, __LINE__)
// After a kernel launch: reports launch-configuration errors (asynchronous faults surface later).
#define ALAP_GPU_CHECK_LAUNCH() alap_gpu_check(alap_gpu_get_last_error(), "kernel launch", __FILE__, __LINE__)

// ---------------------------------------------------------------------------------------------
// Device helpers: warp size, shuffles, fp16 bits, dot4.
// ---------------------------------------------------------------------------------------------
#if defined(ALAP_GPU_DEVICE_COMPILE)

// Lanes in a warp/wavefront, as a compile-time constant of the device pass. NVIDIA: 32. AMD: the
// compiler's wave size for this target (gfx10/gfx11 default to wave32, -mwavefrontsize64 gives 64;
// gfx9 is wave64). The host pass has no target: it sees 64, and host code must not rely on it
// (launch block sizes that are multiples of 64 are right for both).
#if defined(ALAP_GPU_BACKEND_CUDA)
#define ALAP_WARP_SIZE 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define ALAP_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define ALAP_WARP_SIZE 64
#endif

// Butterfly shuffle within groups of `width` lanes (width a power of two ≤ ALAP_WARP_SIZE); every
// lane of the warp must call it (CUDA's _sync form with the full mask).
__device__ __forceinline__ float alap_shfl_xor(float v, int lane_mask, int width = ALAP_WARP_SIZE) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#else
  return __shfl_xor(v, lane_mask, width);
#endif
}
__device__ __forceinline__ int alap_shfl_xor(int v, int lane_mask, int width = ALAP_WARP_SIZE) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#else
  return __shfl_xor(v, lane_mask, width);
#endif
}

// IEEE binary16 bits <-> float on the device (hardware conversion, round to nearest even).
__device__ __forceinline__ float alap_half_to_float(uint16_t bits) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __half2float(__ushort_as_half(bits));
#else
  return static_cast<float>(__builtin_bit_cast(_Float16, bits));
#endif
}
__device__ __forceinline__ uint16_t alap_float_to_half(float f) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __half_as_ushort(__float2half_rn(f));
#else
  return __builtin_bit_cast(uint16_t, static_cast<_Float16>(f));
#endif
}

// c + Σ_{i<4} int8(a_i)·int8(b_i), lane 0 in the low byte (the normative K word). The builtin is
// chosen by the target macro: sdot4 on gfx11 crashes clang 15 and sudot4 is an error on gfx10.3.
__device__ __forceinline__ int alap_dot4(int a, int b, int c) {
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || defined(__gfx1103__)
  return __builtin_amdgcn_sudot4(true, a, true, b, c, false);  // v_dot4_i32_iu8, both signed
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx1011__) || \
    defined(__gfx1012__) || defined(__gfx1030__) || defined(__gfx1031__) || defined(__gfx1032__) ||  \
    defined(__gfx1033__) || defined(__gfx1034__) || defined(__gfx1035__) || defined(__gfx1036__)
  return __builtin_amdgcn_sdot4(a, b, c, false);  // v_dot4(c)_i32_i8
#elif defined(ALAP_GPU_BACKEND_CUDA) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 610)
  return __dp4a(a, b, c);  // dp4a.s32.s32
#else
  for (int i = 0; i < 4; ++i) {
    c += static_cast<int>(static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * i))) *
         static_cast<int>(static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * i)));
  }
  return c;
#endif
}

// Byte permutes. Three forms, chosen at compile time:
//   ALAP_GPU_HW_PERM (CUDA, the default there): PRMT with nibble selectors (alap_byte_perm,
//     alap_lut16_nibbles, alap_prmt_sign);
//   ALAP_GPU_BYTE_SEL_PERM (HIP, the default there): v_perm_b32 with byte selectors (alap_perm_b32,
//     alap_lut16_bytes, gpu_lut16.h); -DALAP_GPU_BYTE_SEL_PERM on CUDA emulates it with a scalar
//     stand-in, so that the HIP algorithm can be tested on an NVIDIA GPU (slow: not for timing);
//   -DALAP_GPU_PLAIN_PERM (either backend): plain shifts and masks, the reference for both.
#if !defined(ALAP_GPU_PLAIN_PERM)
#if defined(ALAP_GPU_BACKEND_CUDA) && !defined(ALAP_GPU_BYTE_SEL_PERM)
#define ALAP_GPU_HW_PERM 1
#elif defined(ALAP_GPU_BACKEND_HIP) && !defined(ALAP_GPU_BYTE_SEL_PERM)
#define ALAP_GPU_BYTE_SEL_PERM 1
#endif
#elif defined(ALAP_GPU_BYTE_SEL_PERM)
#error "gpu_port.h: ALAP_GPU_PLAIN_PERM and ALAP_GPU_BYTE_SEL_PERM exclude each other"
#endif

// Byte permute: byte i of the result is byte s_i of the 8-byte value y:x (x bytes 0-3, y bytes
// 4-7), s_i = nibble i of s, which must be 0..7 (bit 3 clear: PRMT would replicate a sign there).
// CUDA: one PRMT. Elsewhere plain shifts and masks (HIP: for a constant s, clang for gfx1100 forms
// v_perm_b32 from them by itself).
__device__ __forceinline__ uint32_t alap_byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#if defined(ALAP_GPU_HW_PERM)
  return __byte_perm(x, y, s);
#else
  const uint64_t v = (static_cast<uint64_t>(y) << 32) | x;
  uint32_t r = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) r |= static_cast<uint32_t>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xFFu) << (8 * i);
  return r;
#endif
}

#if defined(ALAP_GPU_HW_PERM)
// PRMT in PTX's default mode with the whole selector nibble: bits 0-2 pick byte of y:x, bit 3 set
// gives the sign bit of that byte spread over the result byte (0x00 or 0xFF) instead of the byte.
// Inline PTX rather than __byte_perm, whose documentation defines only bits 0-2.
__device__ __forceinline__ uint32_t alap_prmt_sign(uint32_t x, uint32_t y, uint32_t s) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y), "r"(s));
  return r;
}
#endif

// A 16-entry byte table applied to the 8 nibbles of v (nibble n = bits 4n..4n+3): byte j of r0 is
// table[nibble j], byte j of r1 table[nibble 4 + j]; entry e is byte e%4 of t[e/4]. Nibble order,
// not byte order: a byte's low and high nibble land in adjacent bytes. CUDA: the low 3 bits of each
// nibble pick from t[0]:t[1] and from t[2]:t[3] (4 PRMTs for 8 nibbles), bit 3 chooses between
// the two (one PRMT per 4 bytes, selectors j + 4·bit3). Elsewhere (the fallback, and CUDA with
// ALAP_GPU_PLAIN_PERM, to check it): per nibble a shift of the table half that bit 3 picks.
__device__ __forceinline__ void alap_lut16_nibbles(uint32_t v, const uint32_t (&t)[4], uint32_t& r0, uint32_t& r1) {
#if defined(ALAP_GPU_HW_PERM)
  const uint32_t s = v & 0x77777777u;
  const uint32_t c = ((v >> 1) & 0x44444444u) | 0x32103210u;  // j + 4·bit3 of nibble j (and 4 + j)
  r0 = __byte_perm(__byte_perm(t[0], t[1], s), __byte_perm(t[2], t[3], s), c);
  r1 = __byte_perm(__byte_perm(t[0], t[1], s >> 16), __byte_perm(t[2], t[3], s >> 16), c >> 16);
#else
  const uint64_t lo = (static_cast<uint64_t>(t[1]) << 32) | t[0], hi = (static_cast<uint64_t>(t[3]) << 32) | t[2];
  uint32_t r[2] = {0, 0};
#pragma unroll
  for (int n = 0; n < 8; ++n) {
    const uint32_t e = (v >> (4 * n)) & 0xFu;
    const uint64_t h = (e & 8u) != 0 ? hi : lo;
    r[n / 4] |= static_cast<uint32_t>((h >> (8 * (e & 7u))) & 0xFFu) << (8 * (n % 4));
  }
  r0 = r[0];
  r1 = r[1];
#endif
}

#if defined(ALAP_GPU_BYTE_SEL_PERM)
#define ALAP_LUT16_FN __device__ __forceinline__
#include "kernels/gpu/gpu_lut16.h"
// v_perm_b32 (gpu_lut16.h has its rule): __builtin_amdgcn_perm(S0, S1, S2) on AMD (gfx8 and up:
// gfx1030 and gfx1100 alike), the scalar stand-in on CUDA.
__device__ __forceinline__ uint32_t alap_perm_b32(uint32_t s0, uint32_t s1, uint32_t sel) {
#if defined(ALAP_GPU_BACKEND_HIP)
  return __builtin_amdgcn_perm(s0, s1, sel);
#else
  return alap_perm_b32_scalar(s0, s1, sel);
#endif
}
struct alap_perm_b32_op {
  __device__ __forceinline__ uint32_t operator()(uint32_t s0, uint32_t s1, uint32_t sel) const {
    return alap_perm_b32(s0, s1, sel);
  }
};
// The table in byte order (gpu_lut16.h): lo byte i = table[low nibble of byte i of v], hi byte i =
// table[high nibble of byte i].
__device__ __forceinline__ void alap_lut16_bytes(uint32_t v, const uint32_t (&t)[4], uint32_t& lo, uint32_t& hi) {
  alap_lut16_bytes_by(v, t, lo, hi, alap_perm_b32_op{});
}
#endif

// Loads of data that other blocks of the same launch wrote (after __threadfence and a counter):
// served from L2, never from a possibly stale per-multiprocessor cache. CUDA: ld.global.cg; HIP:
// volatile loads (glc, which bypasses the per-CU cache).
__device__ __forceinline__ float alap_load_l2(const float* p) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __ldcg(p);
#else
  return *static_cast<const volatile float*>(p);
#endif
}
__device__ __forceinline__ float4 alap_load_l2_f4(const float* p) {  // p 16-byte aligned
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __ldcg(reinterpret_cast<const float4*>(p));
#else
  const volatile float* v = p;
  return make_float4(v[0], v[1], v[2], v[3]);
#endif
}

// Whether alap_cp_async below is an asynchronous copy (CUDA; cp.async itself needs sm_80+, which the
// CUDA kernels target): 1 on CUDA, 0 on HIP, where it is a plain load and store that waits for its
// data. ALAP_GPU_PLAIN_COPY makes it 0 on CUDA too, so that the path HIP takes runs and is measured
// on an NVIDIA GPU. The same value in host and device passes (kernels size shared memory by it).
#if defined(ALAP_GPU_BACKEND_CUDA) && !defined(ALAP_GPU_PLAIN_COPY)
#define ALAP_GPU_ASYNC_COPY 1
#else
#define ALAP_GPU_ASYNC_COPY 0
#endif

// Asynchronous copy of Bytes (8 or 16) from global to shared memory, read back later by the SAME
// thread after alap_cp_async_wait<N>() (no barrier needed for that). valid = false writes zeros and
// reads nothing. CUDA sm_80+: cp.async (no registers held while the load is in flight); elsewhere a
// plain load and store, and commit/wait do nothing.
template <int Bytes>
__device__ __forceinline__ void alap_cp_async(void* smem, const void* gmem, bool valid) {
  static_assert(Bytes == 8 || Bytes == 16);
#if ALAP_GPU_ASYNC_COPY && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_size = valid ? Bytes : 0;
  if constexpr (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_size) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_size) : "memory");
  }
#else
  if constexpr (Bytes == 16) {
    *static_cast<int4*>(smem) = valid ? *static_cast<const int4*>(gmem) : make_int4(0, 0, 0, 0);
  } else {
    *static_cast<int2*>(smem) = valid ? *static_cast<const int2*>(gmem) : make_int2(0, 0);
  }
#endif
}
__device__ __forceinline__ void alap_cp_async_commit() {
#if ALAP_GPU_ASYNC_COPY && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N committed groups of this thread are still in flight.
template <int N>
__device__ __forceinline__ void alap_cp_async_wait() {
#if ALAP_GPU_ASYNC_COPY && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// A block barrier for shared memory only: the block's shared-memory writes before it are visible to
// every thread after it, and global loads in flight may stay in flight across it. CUDA: __syncthreads
// (bar.sync waits for no load). HIP: __syncthreads is also a workgroup-scope memory fence, which on
// gfx10+ (WGP mode) waits for every outstanding global load and store and invalidates the L0 cache at
// each barrier, so a load issued ahead of a barrier could not stay in flight across it; this waits for
// the shared-memory (LGKM) operations only, then s_barrier. Not for global memory written before it
// and read after it by other threads: use __syncthreads there. gfx12 (RDNA4) changed the wait and
// barrier instructions; it takes __syncthreads here until this is checked there.
__device__ __forceinline__ void alap_sync_lds() {
#if defined(ALAP_GPU_BACKEND_HIP) && defined(__HIP_DEVICE_COMPILE__) && !defined(__GFX12__) && \
    !defined(__gfx1200__) && !defined(__gfx1201__)
  asm volatile("s_waitcnt lgkmcnt(0)\n\ts_barrier" ::: "memory");
#else
  __syncthreads();
#endif
}

// Orders shared-memory accesses of the lanes of one warp (after a read by all lanes, before a write
// by one). AMD wavefronts run in lockstep: a compiler barrier is enough.
__device__ __forceinline__ void alap_syncwarp() {
#if defined(ALAP_GPU_BACKEND_CUDA)
  __syncwarp();
#else
  __builtin_amdgcn_wave_barrier();
#endif
}

#endif  // ALAP_GPU_DEVICE_COMPILE
