// Prefill weight products through the vendor BLAS (gpu_matmul_blas, ops.h): the weights are
// dequantised to fp16 in slices of rows on the device, the activations rounded to fp16 once, and
// the product is one fp16 GEMM with fp32 accumulation on the matrix units per slice (cuBLAS's
// cublasGemmEx with CUDA, rocBLAS's rocblas_gemm_ex with HIP). Long prompts are bound by
// arithmetic, where our int8 mma kernel (matmul.hip) is held back by its per-32-block fp32 steps
// (docs/kernels/gpu.md, session 42).
//   The BLAS is opened at run time (dlopen), so the library has no link-time dependency on it:
// with CUDA the libcublas of the CUDA major version this library was built against, with HIP the
// librocblas of AMD's ROCm 6 or 7 (the ROCm a user brings for RDNA3; Debian's ROCm 5.2 has none,
// so rocBLAS's few ABI facts are declared here and the build needs no rocBLAS package). Before a
// plan reserves any scratch for it, the library runs one product of known exact result through
// the same calls; a library that is missing, has no kernels for this GPU or answers wrongly gives
// a scratch size of 0 and the forward pass keeps gpu_matmul.
// Not the decode products (matmul.hip) and not attention.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/matmul_kernel.h"
#include "kernels/gpu/ops.h"

// CUDA: cuBLAS when its header is there (types only). HIP: rocBLAS (its ABI below).
#if defined(ALAP_GPU_BACKEND_CUDA) && __has_include(<cublas_api.h>)
#define ALAP_GPU_BLAS 1
#define ALAP_GPU_BLAS_CUBLAS 1
#include <cublas_api.h>
#elif defined(ALAP_GPU_BACKEND_HIP)
#define ALAP_GPU_BLAS 1
#define ALAP_GPU_BLAS_ROCBLAS 1
#include "kernels/gpu/blas_tensile.h"
#endif
#if defined(ALAP_GPU_BLAS)
#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <vector>
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
// matrices of small models (128 × 896: 0.4–0.6× at every count). rocBLAS on RDNA3 takes the same
// rule, unmeasured (no AMD GPU here).
bool blas_pays(int n_rows, int n_cols, int n_tokens) {
  const long long weights = (long long)n_rows * n_cols;
  return (n_tokens >= kBlasMinTokens && weights >= (1LL << 21)) || (n_tokens >= 1024 && weights >= (1LL << 19));
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // cuBLAS's advice for Hopper
constexpr size_t kSliceBytes = kGpuBlasSliceBytes;  // fp16 weights dequantised per GEMM, at most
constexpr int kThreads = 256;

size_t round256(size_t b) { return (b + 255) / 256 * 256; }

// ---- the vendor BLAS, opened at run time ---------------------------------------------------

#if defined(ALAP_GPU_BLAS_CUBLAS)
using blas_handle_t = cublasHandle_t;
using blas_status_t = cublasStatus_t;
constexpr blas_status_t kBlasSuccess = CUBLAS_STATUS_SUCCESS;
using gemm_fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                   const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                   cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
constexpr const char* kBlasName = "cuBLAS";
constexpr const char* kBlasSymbols[4] = {"cublasCreate_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2",
                                         "cublasGemmEx"};
std::vector<std::string> blas_library_names() {
  return {"libcublas.so." + std::to_string(CUDART_VERSION / 1000), "libcublas.so"};
}
#else
// rocBLAS's ABI as its headers give it (rocblas-types.h, rocblas-functions.h; unchanged from ROCm
// 5 to 7): an opaque handle, int status (0 is rocblas_status_success), C enums passed as int,
// rocblas_int sizes of 32 bits; rocblas_gemm_ex writes D = alpha·op(A)·op(B) + beta·C.
struct rocblas_handle_opaque;
using blas_handle_t = rocblas_handle_opaque*;
using blas_status_t = int;
constexpr blas_status_t kBlasSuccess = 0;
constexpr int kRocblasOperationNone = 111, kRocblasOperationTranspose = 112;  // rocblas_operation
constexpr int kRocblasF16 = 150, kRocblasF32 = 151;                           // rocblas_datatype
constexpr int kRocblasGemmAlgoStandard = 0;                                   // rocblas_gemm_algo
using gemm_fn = int (*)(blas_handle_t, int trans_a, int trans_b, int m, int n, int k, const void* alpha, const void* a,
                        int a_type, int lda, const void* b, int b_type, int ldb, const void* beta, const void* c,
                        int c_type, int ldc, void* d, int d_type, int ldd, int compute_type, int algo,
                        int32_t solution_index, uint32_t flags);
constexpr const char* kBlasName = "rocBLAS";
constexpr const char* kBlasSymbols[4] = {"rocblas_create_handle", "rocblas_set_stream", "rocblas_set_workspace",
                                         "rocblas_gemm_ex"};
// ROCm 7's rocBLAS is librocblas.so.5, ROCm 6's librocblas.so.4.
std::vector<std::string> blas_library_names() { return {"librocblas.so.5", "librocblas.so.4", "librocblas.so"}; }
#endif

#if defined(ALAP_GPU_BLAS_ROCBLAS)
// Whether the rocBLAS opened as `lib` has Tensile kernels for the current device (blas_tensile.h:
// without them rocBLAS aborts the process instead of returning an error).
bool rocblas_has_kernels(void* any_symbol) {
  int device = 0;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&device) != hipSuccess || hipGetDeviceProperties(&prop, device) != hipSuccess) return false;
  Dl_info info{};
  if (dladdr(any_symbol, &info) == 0 || info.dli_fname == nullptr) return false;
  return tensile_dir_has_arch(tensile_dir(std::getenv("ROCBLAS_TENSILE_LIBPATH"), info.dli_fname),
                              gpu_arch_base(prop.gcnArchName));
}
#endif

using create_fn = blas_status_t (*)(blas_handle_t*);
using set_stream_fn = blas_status_t (*)(blas_handle_t, alap_gpu_stream_t);
using set_workspace_fn = blas_status_t (*)(blas_handle_t, void*, size_t);

// Whether the library may be used: not yet checked, passed its check, failed it (or no handle).
enum class BlasState { unchecked, usable, unusable };

struct Blas {
  create_fn create = nullptr;
  set_stream_fn set_stream = nullptr;
  set_workspace_fn set_workspace = nullptr;
  gemm_fn gemm_ex = nullptr;
  blas_handle_t handle = nullptr;  // made by usable() (it allocates on the device)
  BlasState state = BlasState::unchecked;
  bool refused_product = false;  // unusable because it refused a product after passing its check
  std::mutex mutex;  // one handle, its stream and workspace set per call
};

// Where to look for the BLAS: ALAP_GPU_BLAS_LIBRARY alone when it is set (a path or a name; tests
// and unusual installs), else its names on the loader's path and then in the folder of the GPU
// runtime this library uses (ROCm keeps librocblas beside libamdhip64 in /opt/rocm/lib, which
// need not be on the loader's path; the CUDA toolkit keeps libcublas beside libcudart).
std::vector<std::string> blas_candidates() {
  if (const char* env = std::getenv("ALAP_GPU_BLAS_LIBRARY"); env != nullptr && *env != '\0') return {env};
  std::vector<std::string> out = blas_library_names();
  Dl_info info{};
  alap_gpu_error_t (*runtime_call)(int*) = &ALAP_GPU_RT(cudaGetDeviceCount, hipGetDeviceCount);
  if (dladdr(reinterpret_cast<const void*>(runtime_call), &info) != 0 && info.dli_fname != nullptr) {
    const std::string runtime = info.dli_fname;
    const size_t slash = runtime.rfind('/');
    if (slash != std::string::npos) {
      for (const std::string& name : blas_library_names()) out.push_back(runtime.substr(0, slash + 1) + name);
    }
  }
  return out;
}

// The library opened (or why none is): its four entry points, the file it came from.
struct BlasOpen {
  Blas* blas = nullptr;  // null when none could be used (then the forward pass never asks for a
                         // BLAS product: gpu_blas_scratch_bytes is 0)
  gpu_blas_state failure = gpu_blas_not_found;  // why blas is null
  std::string file;                             // the candidate that opened, "" when none did
};

std::atomic<bool> g_blas_looked_for{false};  // blas_open() has run (gpu_blas_status does not open it)

const BlasOpen& blas_open() {
  static const BlasOpen o = [] {
    BlasOpen r;
    void* lib = nullptr;
    for (const std::string& name : blas_candidates()) {
      lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) {
        r.file = name;
        break;
      }
    }
    if (lib == nullptr) return r;
    auto* b = new Blas;  // lives as long as the process, like the library it points into
    b->create = reinterpret_cast<create_fn>(dlsym(lib, kBlasSymbols[0]));
    b->set_stream = reinterpret_cast<set_stream_fn>(dlsym(lib, kBlasSymbols[1]));
    b->set_workspace = reinterpret_cast<set_workspace_fn>(dlsym(lib, kBlasSymbols[2]));
    b->gemm_ex = reinterpret_cast<gemm_fn>(dlsym(lib, kBlasSymbols[3]));
    bool usable = b->create != nullptr && b->set_stream != nullptr && b->set_workspace != nullptr && b->gemm_ex != nullptr;
#if defined(ALAP_GPU_BLAS_ROCBLAS)
    usable = usable && rocblas_has_kernels(reinterpret_cast<void*>(b->gemm_ex));
#endif
    if (!usable) {
      delete b;
      dlclose(lib);
      r.failure = gpu_blas_incomplete;
      return r;
    }
    r.blas = b;
    return r;
  }();
  g_blas_looked_for.store(true, std::memory_order_release);
  return o;
}

Blas* blas() { return blas_open().blas; }

void blas_check(blas_status_t s, const char* what) {
  if (s != kBlasSuccess)
    throw std::runtime_error(std::string(kBlasName) + " " + what + " failed (status " + std::to_string(int(s)) + ")");
}

// y = beta·y + Wᵀ·x in the BLAS's column-major terms: W's m rows of k fp16 values are the columns
// of a (k × m) matrix, x's n tokens the columns of (k × n), y's tokens columns of (m × n) with
// leading dimension ldy (the whole matrix's rows when this is one slice of them).
blas_status_t gemm(Blas& b, int m, int n, int k, const uint16_t* w16, const uint16_t* x16, float beta, float* y,
                   int ldy) {
  const float one = 1.0f;
#if defined(ALAP_GPU_BLAS_CUBLAS)
  return b.gemm_ex(b.handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, w16, CUDA_R_16F, k, x16, CUDA_R_16F, k, &beta, y,
                   CUDA_R_32F, ldy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
#else
  return b.gemm_ex(b.handle, kRocblasOperationTranspose, kRocblasOperationNone, m, n, k, &one, w16, kRocblasF16, k,
                   x16, kRocblasF16, k, &beta, y, kRocblasF32, ldy, y, kRocblasF32, ldy, kRocblasF32,
                   kRocblasGemmAlgoStandard, 0, 0);
#endif
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

// y = Wᵀ·x (+ beta·y) through the BLAS (call with b.mutex held and b usable): x to fp16 in the
// scratch's first act_bytes, then W's rows slice_rows at a time (all at once for F16, used in
// place) to fp16 after the workspace, one GEMM a slice. False when the BLAS refused the first
// GEMM (or its stream or workspace), y untouched; a refusal after y was partly written throws.
bool blas_product(Blas& b, uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, int n_tokens,
                  float* d_y, float beta, uint8_t* scratch, size_t act_bytes, int slice_rows, alap_gpu_stream_t s) {
  auto* x16 = reinterpret_cast<uint16_t*>(scratch);
  void* workspace = scratch + act_bytes;
  auto* w16 = reinterpret_cast<uint16_t*>(scratch + act_bytes + kWorkspaceBytes);
  const size_t count = size_t(n_tokens) * size_t(n_cols);
  const size_t grid = std::min<size_t>((count + kThreads - 1) / kThreads, 65535 * 8);
  alap_launch(act_to_half_kernel, unsigned(grid), kThreads, 0, s, d_x, x16, count);
  ALAP_GPU_CHECK_LAUNCH();
  const wtype_geom g = wtype_geometry(dtype);
  const size_t row_bytes = size_t(n_cols / g.block_elems) * g.block_bytes;
  // cuBLAS's set stream resets the workspace, so it is set after.
  if (b.set_stream(b.handle, s) != kBlasSuccess || b.set_workspace(b.handle, workspace, kWorkspaceBytes) != kBlasSuccess)
    return false;
  for (int r0 = 0; r0 < n_rows; r0 += slice_rows) {
    const int m = std::min(slice_rows, n_rows - r0);
    const uint16_t* a = nullptr;
    if (dtype == kF16) {
      a = static_cast<const uint16_t*>(d_w) + size_t(r0) * n_cols;
    } else {
      dequant_rows(dtype, static_cast<const uint8_t*>(d_w), row_bytes, r0, m, n_cols, w16, s);
      ALAP_GPU_CHECK_LAUNCH();
      a = w16;
    }
    const blas_status_t st = gemm(b, m, n_tokens, n_cols, a, x16, beta, d_y + r0, n_rows);
    if (st != kBlasSuccess && r0 == 0) return false;
    blas_check(st, "gemm");
  }
  return true;
}

// One product of known exact result through blas_product (Q8_0 weights dequantised in three
// slices of 16 rows, a leading dimension larger than a slice, beta 0 over NaN and then beta 1): a
// library of another ABI, without kernels for this GPU or with wrong answers fails it. Small
// integers, so every product and sum is exact in fp16 and fp32. Call with b.mutex held.
bool self_check(Blas& b) {
  constexpr int kRows = 48, kCols = 64, kTokens = 3, kSlice = 16;
  constexpr size_t kRowBytes = kCols / 32 * 34;  // Q8_0: an fp16 scale and 32 int8 a block
  auto wv = [](int r, int c) { return (r * 7 + c * 3) % 9 - 4; };
  auto xv = [](int t, int c) { return (t * 5 + c * 11) % 7 - 3; };
  std::vector<uint8_t> w(kRows * kRowBytes);
  for (int r = 0; r < kRows; ++r) {
    for (int blk = 0; blk < kCols / 32; ++blk) {
      uint8_t* q = w.data() + r * kRowBytes + blk * 34;
      q[0] = 0x00;  // scale 1.0 (fp16 0x3C00, little-endian)
      q[1] = 0x3C;
      for (int e = 0; e < 32; ++e) q[2 + e] = uint8_t(int8_t(wv(r, blk * 32 + e)));
    }
  }
  std::vector<float> x(kTokens * kCols), y(kTokens * kRows);
  for (int t = 0; t < kTokens; ++t)
    for (int c = 0; c < kCols; ++c) x[t * kCols + c] = float(xv(t, c));
  const size_t act_bytes = round256(size_t(kTokens) * kCols * 2);
  const size_t scratch_bytes = act_bytes + kWorkspaceBytes + size_t(kSlice) * kCols * 2;
  uint8_t *d_w = nullptr, *scratch = nullptr;
  float *d_x = nullptr, *d_y = nullptr;
  alap_gpu_stream_t s = nullptr;
  bool ok = false;
  try {
    ALAP_GPU_CHECK(alap_gpu_malloc(&d_w, w.size()));
    ALAP_GPU_CHECK(alap_gpu_malloc(&d_x, x.size() * sizeof(float)));
    ALAP_GPU_CHECK(alap_gpu_malloc(&d_y, y.size() * sizeof(float)));
    ALAP_GPU_CHECK(alap_gpu_malloc(&scratch, scratch_bytes));
    ALAP_GPU_CHECK(alap_gpu_stream_create(&s));
    ALAP_GPU_CHECK(alap_gpu_memcpy(d_w, w.data(), w.size(), alap_gpu_memcpy_h2d));
    ALAP_GPU_CHECK(alap_gpu_memcpy(d_x, x.data(), x.size() * sizeof(float), alap_gpu_memcpy_h2d));
    ALAP_GPU_CHECK(alap_gpu_memset(d_y, 0xFF, y.size() * sizeof(float)));  // NaN: beta 0 must not read it
    ALAP_GPU_CHECK(alap_gpu_device_synchronize());
    ok = blas_product(b, kQ8_0, d_w, kRows, kCols, d_x, kTokens, d_y, 0.0f, scratch, act_bytes, kSlice, s) &&
         blas_product(b, kQ8_0, d_w, kRows, kCols, d_x, kTokens, d_y, 1.0f, scratch, act_bytes, kSlice, s);
    ALAP_GPU_CHECK(alap_gpu_stream_synchronize(s));
    ALAP_GPU_CHECK(alap_gpu_memcpy(y.data(), d_y, y.size() * sizeof(float), alap_gpu_memcpy_d2h));
    for (int t = 0; t < kTokens && ok; ++t) {
      for (int r = 0; r < kRows; ++r) {
        int dot = 0;
        for (int c = 0; c < kCols; ++c) dot += wv(r, c) * xv(t, c);
        if (y[t * kRows + r] != float(2 * dot)) ok = false;
      }
    }
  } catch (const std::exception&) {
    ok = false;
  }
  if (s != nullptr) (void)alap_gpu_stream_synchronize(s);
  if (s != nullptr) (void)alap_gpu_stream_destroy(s);
  for (void* p : {static_cast<void*>(d_w), static_cast<void*>(d_x), static_cast<void*>(d_y),
                  static_cast<void*>(scratch)}) {
    if (p != nullptr) (void)alap_gpu_free(p);
  }
  (void)alap_gpu_get_last_error();  // a failed launch in the check is not the next call's error
  return ok;
}

// Whether b may be used (call with b.mutex held): its handle made and its check passed, both once.
// The plan asks first (gpu_blas_scratch_bytes), so a first prompt pays neither the handle's ~0.1 s
// nor the check.
bool usable(Blas& b) {
  if (b.state == BlasState::unchecked) {
    b.state = BlasState::unusable;
    if (b.create(&b.handle) != kBlasSuccess) {
      b.handle = nullptr;
    } else if (self_check(b)) {
      b.state = BlasState::usable;
    }
  }
  return b.state == BlasState::usable;
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
    if (!usable(*b)) return 0;  // no device, no memory for a handle, or the check failed: no BLAS
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
  Blas* b = nullptr;
  if (wanted && blas_shape(dtype, n_cols) && d_scratch != nullptr && d_x != nullptr &&
      scratch_bytes > act_bytes + kWorkspaceBytes && (b = blas()) != nullptr) {
    const size_t per_row = size_t(n_cols) * 2;
    const size_t fit = std::min((scratch_bytes - act_bytes - kWorkspaceBytes), kSliceBytes) / per_row / 16 * 16;
    slice_rows = dtype == kF16 ? n_rows : int(std::min<size_t>(fit, size_t(n_rows)));
  }
  if (slice_rows <= 0 || reinterpret_cast<uintptr_t>(d_scratch) % 256 != 0 ||
      reinterpret_cast<uintptr_t>(d_w) % 16 != 0 || n_rows <= 0) {
    return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, stream);
  }
  bool refused = false;
  const int rc = gpu_api_call("gpu_matmul_blas", [&] {
    if (d_y == nullptr) throw std::invalid_argument("d_y is null");
    std::lock_guard<std::mutex> lock(b->mutex);
    // A BLAS that failed its check, or passed it but refuses a product (a shape it has no kernel
    // or workspace for), is not asked again: this and every later product go to gpu_matmul.
    if (!usable(*b)) {
      refused = true;
    } else if (!blas_product(*b, dtype, d_w, n_rows, n_cols, d_x, n_tokens, d_y, beta, static_cast<uint8_t*>(d_scratch),
                             act_bytes, slice_rows, static_cast<alap_gpu_stream_t>(stream))) {
      refused = true;
      b->refused_product = true;
    }
    if (refused) b->state = BlasState::unusable;
  });
  if (rc == 0 && refused) return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, stream);
  return rc;
#else
  (void)blas_choice;
  (void)d_scratch;
  (void)scratch_bytes;
  return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, stream);
#endif
}

int gpu_blas_status(char* name, size_t name_len, char* file, size_t file_len) {
  const auto put = [](char* dst, size_t len, const std::string& v) {
    if (dst == nullptr || len == 0) return;
    const size_t n = std::min(len - 1, v.size());
    std::memcpy(dst, v.data(), n);
    dst[n] = '\0';
  };
#if defined(ALAP_GPU_BLAS)
  put(name, name_len, kBlasName);
  if (blas_choice() == BlasChoice::never) {
    put(file, file_len, "");
    return gpu_blas_off;
  }
  if (!g_blas_looked_for.load(std::memory_order_acquire)) {
    put(file, file_len, "");
    return gpu_blas_not_looked_for;
  }
  const BlasOpen& o = blas_open();  // opened already: no work
  put(file, file_len, o.file);
  if (o.blas == nullptr) return o.failure;
  std::lock_guard<std::mutex> lock(o.blas->mutex);
  switch (o.blas->state) {
    case BlasState::unchecked:
      return gpu_blas_unchecked;
    case BlasState::usable:
      return gpu_blas_ready;
    case BlasState::unusable:
      break;
  }
  return o.blas->refused_product ? gpu_blas_refused : gpu_blas_failed_check;
#else
  put(name, name_len, "");
  put(file, file_len, "");
  return gpu_blas_not_built;
#endif
}

}  // extern "C"

}  // namespace alap::gpu
