// Writes new K rows into the packed k8 cache layout (DESIGN.md "KV cache formats (normative)"):
// one 32-lane group per 32-value block, d = max|x|/127 (stored fp16), q = round(x/d) in [-127, 127]
// (kv_k8_quant.h).
// Not the V write (fp16 V rows are a plain copy) and not the CPU twin (kernels/cpu, k8_quantize).
#include <stdexcept>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/kv_k8_quant.h"

namespace alap::gpu {

namespace {
constexpr int kStoreThreads = 128;  // 4 blocks of 32 values per thread block
constexpr int kStoreBlock = 32;
}  // namespace

// k_new [n_tokens][n_kv_head][head_dim] fp32 → k_q[h][pos0 + t][:] int8, k_d[h][pos0 + t][:] fp16
__global__ void __launch_bounds__(kStoreThreads) kv_k8_store_kernel(kv_k8_store_params p) {
  // Launched as a programmatic dependent (alap_launch): k_new is read only after the kernel before
  // has finished. Then a kernel launched after this one with programmatic dependent launch
  // (attention with kAttnLaunchPdl, the V store) may start and stream the older rows; it reads the
  // rows written here only after its griddepcontrol.wait, which returns once this grid has
  // finished and its writes are visible. No-ops on HIP and before sm_90 (gpu_pdl.h).
  alap_pdl_begin();
  const int nb = p.head_dim / kStoreBlock;
  const long long n_blocks = (long long)p.n_tokens * p.n_kv_head * nb;
  const long long blk = (long long)blockIdx.x * (kStoreThreads / kStoreBlock) + threadIdx.x / kStoreBlock;
  const int lane = threadIdx.x % kStoreBlock;
  const bool valid = blk < n_blocks;  // invalid lanes still shuffle (whole warps must)
  const int b = valid ? int(blk % nb) : 0;
  const int h = valid ? int((blk / nb) % p.n_kv_head) : 0;
  const int t = valid ? int(blk / nb / p.n_kv_head) : 0;
  const float x = valid ? p.k_new[(size_t(t) * p.n_kv_head + h) * p.head_dim + b * kStoreBlock + lane] : 0.0f;
  const alap_k8_lane r = alap_k8_quantize_lane(x);
  if (!valid) return;
  const size_t row = size_t(h) * p.capacity + p.pos0 + t;
  p.k_q[row * p.head_dim + b * kStoreBlock + lane] = static_cast<int8_t>(r.q);
  if (lane == 0) p.k_d[row * nb + b] = alap_float_to_half(r.d);
}

extern "C" int kv_k8_store_run(const kv_k8_store_params* p, void* stream) {
  return gpu_api_call("kv_k8_store_run", [&] {
    if (p == nullptr) throw std::invalid_argument("params is null");
    if (p->head_dim <= 0 || p->head_dim % kStoreBlock != 0)
      throw std::invalid_argument("head_dim must be a positive multiple of 32");
    if (p->n_tokens < 0 || p->n_kv_head <= 0 || p->pos0 < 0 || p->pos0 + p->n_tokens > p->capacity)
      throw std::invalid_argument("rows pos0..pos0+n_tokens must lie in [0, capacity)");
    if (p->n_tokens == 0) return;
    if (p->k_new == nullptr || p->k_q == nullptr || p->k_d == nullptr)
      throw std::invalid_argument("k_new, k_q or k_d is null");
    const long long n_blocks = (long long)p->n_tokens * p->n_kv_head * (p->head_dim / kStoreBlock);
    const long long grid = (n_blocks + kStoreThreads / kStoreBlock - 1) / (kStoreThreads / kStoreBlock);
    if (grid > 0x7fffffffLL) throw std::invalid_argument("too many rows for one launch");
    alap_launch(kv_k8_store_kernel, dim3(unsigned(grid)), dim3(kStoreThreads), 0,
                static_cast<alap_gpu_stream_t>(stream), *p);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

}  // namespace alap::gpu
