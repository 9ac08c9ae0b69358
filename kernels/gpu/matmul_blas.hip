// Prefill weight products through the vendor BLAS (gpu_matmul_blas, ops.h): the weights are
// dequantised to fp16 in slices of rows on the device, the activations rounded to fp16 once, and
// the product is one fp16 GEMM with fp32 accumulation on the tensor cores per slice (cuBLAS
// cublasGemmEx). Long prompts are bound by arithmetic, where our int8 mma kernel (matmul.hip) is
// held back by its per-32-block fp32 steps (docs/kernels/gpu.md, session 42).
//   cuBLAS is opened at run time (dlopen of the libcublas that matches the CUDA runtime this
// library was built against), so the library has no link-time dependency on it: without it the
// scratch size is 0 and the forward pass keeps gpu_matmul.
//   HIP: no BLAS here (Debian's ROCm 5.2 has no hipBLAS and RDNA3 needs AMD's ROCm 6.x, where it
// is a later step): the scratch size is 0 and gpu_matmul_blas is gpu_matmul.
// Not the decode products (matmul.hip) and not attention.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/matmul_kernel.h"
#include "kernels/gpu/ops.h"

// With CUDA and its cuBLAS header (types only; the library is opened at run time).
#if defined(ALAP_GPU_BACKEND_CUDA) && __has_include(<cublas_api.h>)
#define ALAP_GPU_BLAS 1
#include <cublas_api.h>
#include <dlfcn.h>

#include <mutex>
#endif

namespace alap::gpu {

namespace {

// How ALAP_GPU_PREFILL (read at every call, like matmul.hip's) steers the choice: unset or "auto"
// lets blas_pays decide for each product, "blas" takes BLAS for every product of more than one
// token (tests, comparisons), any other value ("kernels", "mma128", "dot4", ...) never takes it.
enum class BlasChoice { automatic, always, never };

// Whether blas_pays decides by default (else BLAS only with ALAP_GPU_PREFILL=blas).
constexpr bool kBlasByDefault = true;

BlasChoice blas_choice() {
  const char* env = std::getenv("ALAP_GPU_PREFILL");
  if (env == nullptr || std::string(env).empty() || std::string(env) == "auto")
    return kBlasByDefault ? BlasChoice::automatic : BlasChoice::never;
  return std::string(env) == "blas" ? BlasChoice::always : BlasChoice::never;
}

#if defined(ALAP_GPU_BLAS)

// Products of at least this many tokens may take BLAS by default (blas_pays).
constexpr int kBlasMinTokens = 128;

// Whether BLAS is faster than gpu_matmul for this product, by the H200's measurements (docs/bench/
// gpu.md, session 42, ops_gpu_test --bench-prefill): the fp16 copy of W costs a write and a read of
// 2 bytes a weight whatever the token count, so BLAS pays on large matrices from 128 tokens
// (1.04–2.3× at 128, 1.7–2.4× at 512, 1.6–3.6× at 2048 for ≥ 2M weights) and on mid-size ones
// only from 1024 (0.8–1M weights: 0.95–1.08× at 512, 1.2× at 2048); never on the small K/V
// matrices of small models (128 × 896: 0.4–0.6× at every count).
bool blas_pays(int n_rows, int n_cols, int n_tokens) {
  const long long weights = (long long)n_rows * n_cols;
  return (n_tokens >= kBlasMinTokens && weights >= (1LL << 21)) || (n_tokens >= 1024 && weights >= (1LL << 19));
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS's advice for Hopper
constexpr size_t kSliceBytes = kGpuBlasSliceBytes;  // fp16 weights dequantised per GEMM, at most
constexpr int kThreads = 256;

size_t round256(size_t b) { return (b + 255) / 256 * 256; }

// ---- cuBLAS, opened at run time -------------------------------------------------------------

using create_fn = cublasStatus_t (*)(cublasHandle_t*);
using set_stream_fn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using set_workspace_fn = cublasStatus_t (*)(cublasHandle_t, void*, size_t);
using gemm_ex_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                      const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                      const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

struct Blas {
  create_fn create = nullptr;
  set_stream_fn set_stream = nullptr;
  set_workspace_fn set_workspace = nullptr;
  gemm_ex_fn gemm_ex = nullptr;
  cublasHandle_t handle = nullptr;  // made by ready() (it allocates on the device)
  std::mutex mutex;                 // one handle, its stream and workspace set per call
};

// The library and its four entry points, or null when it cannot be opened (then the forward pass
// never asks for a BLAS product: gpu_blas_scratch_bytes is 0).
Blas* blas() {
  static Blas* const b = []() -> Blas* {
    const std::string versioned = "libcublas.so." + std::to_string(CUDART_VERSION / 1000);
    void* lib = dlopen(versioned.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    auto* r = new Blas;  // lives as long as the process, like the library it points into
    r->create = reinterpret_cast<create_fn>(dlsym(lib, "cublasCreate_v2"));
    r->set_stream = reinterpret_cast<set_stream_fn>(dlsym(lib, "cublasSetStream_v2"));
    r->set_workspace = reinterpret_cast<set_workspace_fn>(dlsym(lib, "cublasSetWorkspace_v2"));
    r->gemm_ex = reinterpret_cast<gemm_ex_fn>(dlsym(lib, "cublasGemmEx"));
    if (r->create == nullptr || r->set_stream == nullptr || r->set_workspace == nullptr || r->gemm_ex == nullptr) {
      delete r;
      dlclose(lib);
      return nullptr;
    }
    return r;
  }();
  return b;
}

// b's handle, made now if it does not exist (call with b.mutex held): success, or cublasCreate's
// status. The plan asks first (gpu_blas_scratch_bytes), so that a first prompt does not pay
// cublasCreate's ~0.1 s.
cublasStatus_t ready(Blas& b) {
  if (b.handle != nullptr) return CUBLAS_STATUS_SUCCESS;
  const cublasStatus_t st = b.create(&b.handle);
  if (st != CUBLAS_STATUS_SUCCESS) b.handle = nullptr;
  return st;
}

void blas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed (cuBLAS status " + std::to_string(int(s)) + ")");
}

// ---- conversions to fp16 --------------------------------------------------------------------

// fp16 of a value, finite values beyond fp16's range held at ±65504 (not turned into infinities);
// NaN and infinities stay what they are.
__device__ __forceinline__ uint16_t half_saturated(float v) {
  if (isfinite(v)) v = fminf(fmaxf(v, -65504.0f), 65504.0f);
  return alap_float_to_half(v);
}

__global__ void __launch_bounds__(kThreads) act_to_half_kernel(const float* x, uint16_t* y, size_t count) {
  alap_pdl_begin();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) y[i] = half_saturated(x[i]);
}

// Rows r0 .. r0 + n_rows of a quantised matrix as fp16 [n_rows][n_cols]: one thread per 32-block,
// unpacked once (matmul_kernel.h) and written as four 16-byte stores.
template <uint32_t T>
__global__ void __launch_bounds__(kThreads) dequant_half_kernel(const uint8_t* w, size_t row_bytes, int r0,
                                                                int n_rows, int n_cols, uint16_t* out) {
  alap_pdl_begin();
  const int blocks_per_row = n_cols / 32;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)n_rows * blocks_per_row) return;
  const int r = int(i / blocks_per_row), blk = int(i % blocks_per_row);
  uint32_t h[16];
  if constexpr (T == kBF16) {
    const uint16_t* src = reinterpret_cast<const uint16_t*>(w + size_t(r0 + r) * row_bytes) + blk * 32;
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
      h[e / 2] = uint32_t(half_saturated(bf16_to_float(src[e]))) | (uint32_t(half_saturated(bf16_to_float(src[e + 1]))) << 16);
    }
  } else {
    wblock u;
    unpack_block<T>(w + size_t(r0 + r) * row_bytes, blk, u);
    constexpr bool signed_bytes = T == kQ8_0 || T == kIQ4_NL || T == kIQ4_XS;
#pragma unroll
    for (int e = 0; e < 32; e += 2) {
      h[e / 2] = uint32_t(half_saturated(wblock_value(u, e, signed_bytes))) |
                 (uint32_t(half_saturated(wblock_value(u, e + 1, signed_bytes))) << 16);
    }
  }
  uint4* dst = reinterpret_cast<uint4*>(out + size_t(r) * n_cols + size_t(blk) * 32);
#pragma unroll
  for (int k = 0; k < 4; ++k) dst[k] = make_uint4(h[4 * k], h[4 * k + 1], h[4 * k + 2], h[4 * k + 3]);
}

template <uint32_t T>
void launch_dequant(const uint8_t* w, size_t row_bytes, int r0, int n_rows, int n_cols, uint16_t* out,
                    alap_gpu_stream_t s) {
  const long long n = (long long)n_rows * (n_cols / 32);
  alap_launch(dequant_half_kernel<T>, unsigned((n + kThreads - 1) / kThreads), kThreads, 0, s, w, row_bytes, r0,
              n_rows, n_cols, out);
}

void dequant_rows(uint32_t dtype, const uint8_t* w, size_t row_bytes, int r0, int n_rows, int n_cols, uint16_t* out,
                  alap_gpu_stream_t s) {
  bool converted = false;
  with_wtype(dtype, [&](auto t) {
    if constexpr (decltype(t)::value != kF32 && decltype(t)::value != kF16) {
      launch_dequant<decltype(t)::value>(w, row_bytes, r0, n_rows, n_cols, out, s);
      converted = true;
    }
  });
  if (!converted) throw std::invalid_argument("weight type " + std::to_string(dtype) + " has no fp16 conversion");
}

// Whether a product of this type and shape may take BLAS at all: every weight type but F32 (its
// fp32 products stay exact in matmul.hip; F32 weights are rare and small), n_cols a multiple of 32.
bool blas_shape(uint32_t dtype, int n_cols) {
  const wtype_geom g = wtype_geometry(dtype);
  return g.block_elems != 0 && dtype != kF32 && n_cols % 32 == 0 && n_cols > 0;
}

#endif  // ALAP_GPU_BLAS

}  // namespace

extern "C" {

size_t gpu_blas_scratch_bytes(int max_tokens, int max_cols) {
#if defined(ALAP_GPU_BLAS)
  const BlasChoice c = blas_choice();
  if (c == BlasChoice::never || max_cols <= 0 || max_tokens < (c == BlasChoice::always ? 2 : kBlasMinTokens)) return 0;
  Blas* b = blas();
  if (b == nullptr) return 0;
  {
    std::lock_guard<std::mutex> lock(b->mutex);
    if (ready(*b) != CUBLAS_STATUS_SUCCESS) return 0;  // no device or no memory for a handle: no BLAS
  }
  return round256(size_t(max_tokens) * size_t(max_cols) * 2) + kWorkspaceBytes + kSliceBytes;
#else
  (void)max_tokens;
  (void)max_cols;
  return 0;
#endif
}

int gpu_matmul_blas(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
                    int n_tokens, float* d_y, float beta, void* d_scratch, size_t scratch_bytes, void* stream) {
#if defined(ALAP_GPU_BLAS)
  const BlasChoice choice = blas_choice();
  const bool wanted = choice == BlasChoice::always ? n_tokens > 1
                                                   : choice == BlasChoice::automatic && blas_pays(n_rows, n_cols, n_tokens);
  const size_t act_bytes = round256(size_t(n_tokens > 0 ? n_tokens : 0) * size_t(n_cols > 0 ? n_cols : 0) * 2);
  // Rows dequantised per GEMM: what the scratch holds after the activations and the workspace, a
  // multiple of 16 (every slice's output stays 64-byte aligned), all rows when that is fewer.
  int slice_rows = 0;
  if (wanted && blas_shape(dtype, n_cols) && d_scratch != nullptr && d_x != nullptr &&
      scratch_bytes > act_bytes + kWorkspaceBytes && blas() != nullptr) {
    const size_t per_row = size_t(n_cols) * 2;
    const size_t fit = std::min((scratch_bytes - act_bytes - kWorkspaceBytes), kSliceBytes) / per_row / 16 * 16;
    slice_rows = dtype == kF16 ? n_rows : int(std::min<size_t>(fit, size_t(n_rows)));
  }
  if (slice_rows <= 0 || reinterpret_cast<uintptr_t>(d_scratch) % 256 != 0 ||
      reinterpret_cast<uintptr_t>(d_w) % 16 != 0 || n_rows <= 0) {
    return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, stream);
  }
  return gpu_api_call("gpu_matmul_blas", [&] {
    if (d_y == nullptr) throw std::invalid_argument("d_y is null");
    const auto s = static_cast<alap_gpu_stream_t>(stream);
    auto* base = static_cast<uint8_t*>(d_scratch);
    auto* x16 = reinterpret_cast<uint16_t*>(base);
    void* workspace = base + act_bytes;
    auto* w16 = reinterpret_cast<uint16_t*>(base + act_bytes + kWorkspaceBytes);
    const size_t count = size_t(n_tokens) * size_t(n_cols);
    const size_t grid = std::min<size_t>((count + kThreads - 1) / kThreads, 65535 * 8);
    alap_launch(act_to_half_kernel, unsigned(grid), kThreads, 0, s, d_x, x16, count);
    ALAP_GPU_CHECK_LAUNCH();
    const wtype_geom g = wtype_geometry(dtype);
    const size_t row_bytes = size_t(n_cols / g.block_elems) * g.block_bytes;
    Blas& b = *blas();
    std::lock_guard<std::mutex> lock(b.mutex);
    blas_check(ready(b), "cublasCreate");
    blas_check(b.set_stream(b.handle, s), "cublasSetStream");  // resets the workspace: set it after
    blas_check(b.set_workspace(b.handle, workspace, kWorkspaceBytes), "cublasSetWorkspace");
    const float one = 1.0f;
    for (int r0 = 0; r0 < n_rows; r0 += slice_rows) {
      const int m = std::min(slice_rows, n_rows - r0);
      const uint16_t* a = nullptr;
      if (dtype == kF16) {
        a = static_cast<const uint16_t*>(d_w);
      } else {
        dequant_rows(dtype, static_cast<const uint8_t*>(d_w), row_bytes, r0, m, n_cols, w16, s);
        ALAP_GPU_CHECK_LAUNCH();
        a = w16;
      }
      // Column-major view: W's rows are columns of a (n_cols × m) matrix, x's tokens columns of
      // (n_cols × n_tokens), y's tokens columns of (n_rows × n_tokens); y[r0..] = Wᵀ·x.
      blas_check(b.gemm_ex(b.handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n_tokens, n_cols, &one, a, CUDA_R_16F, n_cols,
                           x16, CUDA_R_16F, n_cols, &beta, d_y + r0, CUDA_R_32F, n_rows, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    }
  });
#else
  (void)blas_choice;
  (void)d_scratch;
  (void)scratch_bytes;
  return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, stream);
#endif
}

}  // extern "C"

}  // namespace alap::gpu
