// Launches and C host API of decode attention (f16, k8, k8v8): validation, the selector that picks
// the kernel (matrix-unit kernels on CUDA for head_dim 64/128, else the scalar ones by head_dim
// bucket × group bucket) and the flash-decoding split, one launch per call. The arithmetic lives
// in attn_k8_kernel.h.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/attn_k8_kernel.h"
#include "kernels/gpu/attn_splits.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

// Kernel names say the cache mode and grep well; template axes: head_dim bucket, group bucket.
template <int HDB, int GB>
__global__ void __launch_bounds__(kThreads, (attn_min_blocks<HDB, GB>)) attn_f16_decode_kernel(attn_kernel_args a) {
  attn_decode_body<kv_mode::f16, HDB, GB>(a);
}
template <int HDB, int GB>
__global__ void __launch_bounds__(kThreads, (attn_min_blocks<HDB, GB>)) attn_k8_decode_kernel(attn_kernel_args a) {
  attn_decode_body<kv_mode::k8, HDB, GB>(a);
}
template <int HDB, int GB>
__global__ void __launch_bounds__(kThreads, (attn_min_blocks<HDB, GB>)) attn_k8v8_decode_kernel(attn_kernel_args a) {
  attn_decode_body<kv_mode::k8v8, HDB, GB>(a);
}

#if ALAP_ATTN_MMA
// The same three on the matrix units, warp-owned tiles (head_dim 64 or 128 exactly, groups ≤ 8).
template <int HD, int GB>
__global__ void __launch_bounds__(kMmaThreads, ALAP_ATTN_MMA_MIN_BLOCKS) attn_f16_decode_mma_kernel(attn_kernel_args a) {
  attn_decode_mma_body<kv_mode::f16, HD, GB>(a);
}
template <int HD, int GB>
__global__ void __launch_bounds__(kMmaThreads, ALAP_ATTN_MMA_MIN_BLOCKS) attn_k8_decode_mma_kernel(attn_kernel_args a) {
  attn_decode_mma_body<kv_mode::k8, HD, GB>(a);
}
template <int HD, int GB>
__global__ void __launch_bounds__(kMmaThreads, ALAP_ATTN_MMA_MIN_BLOCKS) attn_k8v8_decode_mma_kernel(attn_kernel_args a) {
  attn_decode_mma_body<kv_mode::k8v8, HD, GB>(a);
}
#endif

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Multiprocessors of the current device, asked once per thread and device.
int multiprocessor_count() {
  thread_local int cached_device = -1, cached_count = 0;
  int device = 0;
  ALAP_GPU_CHECK(alap_gpu_get_device(&device));
  if (device != cached_device) {
    ALAP_GPU_CHECK(alap_gpu_multiprocessor_count(&cached_count, device));
    cached_device = device;
  }
  return cached_count;
}

// Bytes of one KV head's cache row in mode M: K int8 and its fp16 scales (k8, k8v8) or fp16; V fp16
// (f16, k8) or int8 and its scales (k8v8).
template <kv_mode M>
int kv_row_bytes(int head_dim) {
  const int packed = head_dim + head_dim / 32 * 2;
  return (M == kv_mode::f16 ? 2 * head_dim : packed) + (M == kv_mode::k8v8 ? packed : 2 * head_dim);
}

// The splits of a launch (attn_splits.h: one wave, and for the matrix-unit body, row_bytes > 0, the
// merge's share and one block an SM for short splits). Returns the largest n_ctx the launch serves.
int set_splits(attn_kernel_args& a, int occupancy, int n_slices, int tile, bool device_pos, int row_bytes) {
  attn_split_query q;
  q.n_ctx = a.p.n_ctx;
  q.capacity = a.p.capacity;
  q.n_split = a.p.n_split;
  q.sms = multiprocessor_count();
  q.occupancy = occupancy;
  q.blocks = a.p.n_kv_head * n_slices;
  q.tile = tile;
  q.device_pos = device_pos;
  q.row_bytes = row_bytes;
  const attn_split_plan plan = attn_plan_splits(q);
  a.split_len = plan.split_len;
  a.n_split = plan.n_split;
  return plan.limit;
}

template <kv_mode M, int HDB, int GB>
void launch(attn_kernel_args& a, alap_gpu_stream_t stream, int* limit) {
  using T = decode_tiles<M, HDB, GB>;
  auto kernel = M == kv_mode::f16  ? attn_f16_decode_kernel<HDB, GB>
                : M == kv_mode::k8 ? attn_k8_decode_kernel<HDB, GB>
                                   : attn_k8v8_decode_kernel<HDB, GB>;
  thread_local int cached_occupancy = 0;
  if (cached_occupancy == 0) {
    ALAP_GPU_CHECK(alap_gpu_set_max_dynamic_smem(kernel, T::smem_bytes));
    ALAP_GPU_CHECK(alap_gpu_occupancy(&cached_occupancy, kernel, kThreads, T::smem_bytes));
    if (cached_occupancy < 1) cached_occupancy = 1;
  }
  const int n_slices = ceil_div(a.group, GB);
  // One wave's share only (attn_splits.h: the merge cap is the matrix-unit body's).
  const int reach = set_splits(a, cached_occupancy, n_slices, T::kTile,
                               a.p.pos_dev != nullptr || limit != nullptr, 0);
  if (limit != nullptr) {
    *limit = reach;
    return;
  }
  const dim3 grid(a.p.n_kv_head, a.n_split, n_slices);
  kernel<<<grid, kThreads, T::smem_bytes, stream>>>(a);
  ALAP_GPU_CHECK_LAUNCH();
}

#if ALAP_ATTN_MMA
// Whether the n_split blocks of each KV head (slice) can run as one thread-block cluster with all
// n_kv_head × slices clusters resident at once (one wave). The device is asked once per kernel and
// split count (cache[n_split] = resident clusters + 1, or -1 when refused; 0 = not asked yet).
// Clusters above 8 blocks are non-portable (Hopper allows 16).
template <class Kernel>
bool cluster_fits(Kernel kernel, int n_split, int n_clusters, size_t smem, int* cache) {
  if (!ALAP_ATTN_CLUSTER || n_split < 2 || n_split > 16) return false;
  int& known = cache[n_split];
  if (known == 0) {
    cudaError_t err = cudaSuccess;
    if (n_split > 8) err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    int active = 0;
    if (err == cudaSuccess) {
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(unsigned(n_clusters), unsigned(n_split), 1);
      cfg.blockDim = dim3(kMmaThreads);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = 1;
      attr.val.clusterDim.y = unsigned(n_split);
      attr.val.clusterDim.z = 1;
      cfg.attrs = &attr;
      cfg.numAttrs = 1;
      err = cudaOccupancyMaxActiveClusters(&active, kernel, &cfg);
    }
    if (err != cudaSuccess) (void)cudaGetLastError();  // a refusal is an answer, not a sticky error
    known = err == cudaSuccess ? active + 1 : -1;
    if (std::getenv("ALAP_ATTN_DEBUG"))
      std::fprintf(stderr, "attn decode: clusters of %d blocks: %d resident at once (%s)\n", n_split, active,
                   err == cudaSuccess ? "asked" : cudaGetErrorString(err));
  }
  return known - 1 >= n_clusters;
}

template <kv_mode M, int HD, int GB>
void launch_mma(attn_kernel_args& a, unsigned flags, alap_gpu_stream_t stream, int* limit) {
  using T = mma_tiles<M, HD, GB>;
  auto kernel = M == kv_mode::f16  ? attn_f16_decode_mma_kernel<HD, GB>
                : M == kv_mode::k8 ? attn_k8_decode_mma_kernel<HD, GB>
                                   : attn_k8v8_decode_mma_kernel<HD, GB>;
  thread_local int cached_occupancy = 0;
  thread_local int cluster_cache[17] = {};
  if (cached_occupancy == 0) {
    ALAP_GPU_CHECK(alap_gpu_set_max_dynamic_smem(kernel, T::smem_bytes));
    ALAP_GPU_CHECK(alap_gpu_occupancy(&cached_occupancy, kernel, kMmaThreads, T::smem_bytes));
    if (cached_occupancy < 1) cached_occupancy = 1;
  }
  const int n_slices = ceil_div(a.group, GB);
  const int reach = set_splits(a, cached_occupancy, n_slices, kMmaRows * kMmaWarps,
                               a.p.pos_dev != nullptr || limit != nullptr, kv_row_bytes<M>(a.p.head_dim));
  if (limit != nullptr) {
    *limit = reach;
    return;
  }
  const dim3 grid(a.p.n_kv_head, a.n_split, n_slices);
  const bool pdl = (flags & kAttnLaunchPdl) != 0 && pdl_enabled();  // sm_90+, not ALAP_GPU_PDL=0
  a.pdl = pdl ? 1 : 0;
  const bool cluster = a.p.pos_dev == nullptr &&
                       cluster_fits(kernel, a.n_split, a.p.n_kv_head * n_slices, T::smem_bytes, cluster_cache);
  if (!pdl && !cluster) {
    kernel<<<grid, kMmaThreads, T::smem_bytes, stream>>>(a);
    ALAP_GPU_CHECK_LAUNCH();
    return;
  }
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(kMmaThreads);
  cfg.dynamicSmemBytes = T::smem_bytes;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2]{};
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  if (cluster) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = 1;
    attr[n].val.clusterDim.y = unsigned(a.n_split);
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  ALAP_GPU_CHECK(cudaLaunchKernelEx(&cfg, kernel, a));
}
#endif

// The selector: the matrix-unit kernels where they apply (CUDA; head_dim 64 or 128), else the
// smallest head_dim bucket and group bucket that hold the call.
// Flags (kAttnLaunchPdl) apply to the matrix-unit kernels; the scalar ones launch normally, which
// is always correct (the flag only permits overlap).
template <kv_mode M>
void launch_bucket(attn_kernel_args& a, [[maybe_unused]] unsigned flags, alap_gpu_stream_t stream, int* limit) {
  const int hd = a.p.head_dim, g = a.group;
  const int gb = g <= 4 ? 4 : 8;  // larger groups: slices of 8 (grid z)
#if ALAP_ATTN_MMA
  if (hd == 64 && gb == 4) return launch_mma<M, 64, 4>(a, flags, stream, limit);
  if (hd == 64 && gb == 8) return launch_mma<M, 64, 8>(a, flags, stream, limit);
  if (hd == 128 && gb == 4) return launch_mma<M, 128, 4>(a, flags, stream, limit);
  if (hd == 128 && gb == 8) return launch_mma<M, 128, 8>(a, flags, stream, limit);
#endif
  const int hdb = hd <= 64 ? 64 : (hd <= 128 ? 128 : 256);
#define ALAP_ATTN_CASE(H, B) \
  if (hdb == H && gb == B) return launch<M, H, B>(a, stream, limit);
  ALAP_ATTN_CASE(64, 4) ALAP_ATTN_CASE(64, 8)
  ALAP_ATTN_CASE(128, 4) ALAP_ATTN_CASE(128, 8)
  ALAP_ATTN_CASE(256, 4) ALAP_ATTN_CASE(256, 8)
#undef ALAP_ATTN_CASE
  throw std::logic_error("attn_decode: no kernel for this head_dim/group");
}

// Launches the call, or (limit not null) only works out its splits and the largest n_ctx they serve.
void run_decode(const attn_decode_params& p, kv_mode mode, unsigned flags, alap_gpu_stream_t stream,
                int* limit = nullptr) {
  if (const char* why = attn_decode_check(&p, static_cast<int>(mode))) throw std::invalid_argument(why);
  attn_kernel_args a{};
  a.p = p;
  a.group = p.n_head / p.n_kv_head;
  float* scratch = static_cast<float*>(p.scratch);
  a.part_o = scratch;
  a.part_m = a.part_o + size_t(p.n_head) * kAttnMaxSplit * p.head_dim;
  a.part_l = a.part_m + size_t(p.n_head) * kAttnMaxSplit;
  a.counters = reinterpret_cast<unsigned*>(a.part_l + size_t(p.n_head) * kAttnMaxSplit);
  switch (mode) {
    case kv_mode::f16: return launch_bucket<kv_mode::f16>(a, flags, stream, limit);
    case kv_mode::k8: return launch_bucket<kv_mode::k8>(a, flags, stream, limit);
    case kv_mode::k8v8: return launch_bucket<kv_mode::k8v8>(a, flags, stream, limit);
  }
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

extern "C" {

size_t attn_decode_scratch_bytes(int n_head, int head_dim) {
  if (n_head <= 0 || head_dim <= 0) return 0;
  return sizeof(float) * size_t(n_head) * kAttnMaxSplit * (size_t(head_dim) + 2) + sizeof(unsigned) * size_t(n_head);
}

const char* attn_decode_check(const attn_decode_params* p, int mode) {
  if (p == nullptr) return "attn_decode: params is null";
  if (mode < 0 || mode > 2) return "attn_decode: mode must be 0 (f16), 1 (k8) or 2 (k8v8)";
  if (p->head_dim <= 0 || p->head_dim % kQBlock != 0 || p->head_dim > kAttnMaxHeadDim)
    return "attn_decode: head_dim must be a multiple of 32 in [32, 256]";
  if (p->n_kv_head <= 0 || p->n_head <= 0 || p->n_head % p->n_kv_head != 0)
    return "attn_decode: n_head must be a positive multiple of n_kv_head";
  if (p->n_head / p->n_kv_head > kAttnMaxGroup) return "attn_decode: more than 16 query heads per KV head";
  if (p->n_ctx <= 0 || p->n_ctx > p->capacity) return "attn_decode: n_ctx must be in [1, capacity]";
  if (p->q == nullptr || p->out == nullptr) return "attn_decode: q or out is null";
  if (mode == 0 && p->k_f16 == nullptr) return "attn_decode: f16 needs k_f16";
  if (mode != 0 && (p->k_q == nullptr || p->k_d == nullptr)) return "attn_decode: k8/k8v8 need k_q and k_d";
  if (mode != 2 && p->v == nullptr) return "attn_decode: f16/k8 need fp16 v";
  if (mode == 2 && (p->v_q == nullptr || p->v_d == nullptr)) return "attn_decode: k8v8 needs v_q and v_d";
  if (p->scratch == nullptr) return "attn_decode: scratch is null (attn_decode_scratch_bytes)";
  const void* k = mode != 0 ? static_cast<const void*>(p->k_q) : static_cast<const void*>(p->k_f16);
  const void* v = mode == 2 ? static_cast<const void*>(p->v_q) : static_cast<const void*>(p->v);
  if (!aligned16(k) || !aligned16(v)) return "attn_decode: K or V payload is not 16-byte aligned";
  if (!aligned16(p->out) || !aligned16(p->scratch)) return "attn_decode: out or scratch is not 16-byte aligned";
  if (!aligned16(p->out_q8)) return "attn_decode: out_q8 is not 16-byte aligned (gpu_alloc it)";
  if (p->n_split < 0) return "attn_decode: n_split must be >= 0";
  return nullptr;
}

int attn_f16_decode_run(const attn_decode_params* p, void* stream) {
  return gpu_api_call("attn_f16_decode_run",
                      [&] { run_decode(*p, kv_mode::f16, 0u, static_cast<alap_gpu_stream_t>(stream)); });
}

int attn_k8_decode_run(const attn_decode_params* p, void* stream) {
  return gpu_api_call("attn_k8_decode_run",
                      [&] { run_decode(*p, kv_mode::k8, 0u, static_cast<alap_gpu_stream_t>(stream)); });
}

int attn_k8v8_decode_run(const attn_decode_params* p, void* stream) {
  return gpu_api_call("attn_k8v8_decode_run",
                      [&] { run_decode(*p, kv_mode::k8v8, 0u, static_cast<alap_gpu_stream_t>(stream)); });
}

int attn_decode_run_ex(const attn_decode_params* p, int mode, unsigned flags, void* stream) {
  return gpu_api_call("attn_decode_run_ex", [&] {
    if (mode < 0 || mode > 2) throw std::invalid_argument("attn_decode_run_ex: mode must be 0 (f16), 1 (k8) or 2 (k8v8)");
    if ((flags & ~kAttnLaunchPdl) != 0) throw std::invalid_argument("attn_decode_run_ex: unknown flag bits");
    if (p == nullptr) throw std::invalid_argument("attn_decode: params is null");
    run_decode(*p, static_cast<kv_mode>(mode), flags, static_cast<alap_gpu_stream_t>(stream));
  });
}

int attn_decode_ctx_limit(const attn_decode_params* p, int mode) {
  int limit = -1;
  const int rc = gpu_api_call("attn_decode_ctx_limit", [&] {
    if (mode < 0 || mode > 2)
      throw std::invalid_argument("attn_decode_ctx_limit: mode must be 0 (f16), 1 (k8) or 2 (k8v8)");
    if (p == nullptr) throw std::invalid_argument("attn_decode: params is null");
    run_decode(*p, static_cast<kv_mode>(mode), 0u, nullptr, &limit);
  });
  return rc == 0 ? limit : -1;
}

const char* gpu_error_message(void) { return gpu_error_slot().c_str(); }

}  // extern "C"

}  // namespace alap::gpu
