// Launches and C host API of decode attention (k8 and f16): validation, the flash-decoding split
// choice, the decode kernel and the combine kernel. The arithmetic lives in attn_k8_kernel.h.
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/attn_k8_kernel.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

__global__ void __launch_bounds__(kThreads) attn_k8_decode_kernel(attn_kernel_args a) {
  attn_decode_body<k8_scores>(a);
}
__global__ void __launch_bounds__(kThreads) attn_f16_decode_kernel(attn_kernel_args a) {
  attn_decode_body<f16_scores>(a);
}
__global__ void __launch_bounds__(kThreads) attn_decode_combine_kernel(attn_kernel_args a) {
  attn_decode_combine_body(a);
}

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

// Splits: enough blocks to fill the device about twice (n_kv_head alone rarely does at batch 1),
// but no split shorter than two tiles, where the combine would cost more than it saves.
int choose_split(const attn_decode_params& p) {
  if (p.n_split > 0) return p.n_split < kAttnMaxSplit ? p.n_split : kAttnMaxSplit;
  const int want = ceil_div(2 * multiprocessor_count(), p.n_kv_head);
  const int by_len = ceil_div(p.n_ctx, 2 * kBlockKV);
  int n = want < by_len ? want : by_len;
  n = n < 1 ? 1 : n;
  return n < kAttnMaxSplit ? n : kAttnMaxSplit;
}

void run_decode(const attn_decode_params& p, bool k8, alap_gpu_stream_t stream) {
  if (const char* why = attn_decode_check(&p, k8 ? 1 : 0)) throw std::invalid_argument(why);
  attn_kernel_args a{};
  a.p = p;
  a.group = p.n_head / p.n_kv_head;
  // Split length a multiple of 32 positions; recount so that no split is empty.
  const int want = choose_split(p);
  a.split_len = ceil_div(ceil_div(p.n_ctx, want), 32) * 32;
  a.n_split = ceil_div(p.n_ctx, a.split_len);
  float* scratch = static_cast<float*>(p.scratch);
  a.part_o = scratch;
  a.part_m = a.part_o + size_t(p.n_head) * kAttnMaxSplit * p.head_dim;
  a.part_l = a.part_m + size_t(p.n_head) * kAttnMaxSplit;

  const size_t smem = attn_smem_bytes(a.group, p.head_dim);
  const dim3 grid(p.n_kv_head, a.n_split);
  if (k8) {
    attn_k8_decode_kernel<<<grid, kThreads, smem, stream>>>(a);
  } else {
    attn_f16_decode_kernel<<<grid, kThreads, smem, stream>>>(a);
  }
  ALAP_GPU_CHECK_LAUNCH();
  if (a.n_split > 1) {
    attn_decode_combine_kernel<<<p.n_head, kThreads, 0, stream>>>(a);
    ALAP_GPU_CHECK_LAUNCH();
  }
}

}  // namespace

extern "C" {

size_t attn_decode_scratch_bytes(int n_head, int head_dim) {
  if (n_head <= 0 || head_dim <= 0) return 0;
  return sizeof(float) * size_t(n_head) * kAttnMaxSplit * (size_t(head_dim) + 2);
}

const char* attn_decode_check(const attn_decode_params* p, int k8) {
  if (p == nullptr) return "attn_decode: params is null";
  if (p->head_dim <= 0 || p->head_dim % kQBlock != 0 || p->head_dim > kAttnMaxHeadDim)
    return "attn_decode: head_dim must be a multiple of 32 in [32, 256]";
  if (p->n_kv_head <= 0 || p->n_head <= 0 || p->n_head % p->n_kv_head != 0)
    return "attn_decode: n_head must be a positive multiple of n_kv_head";
  if (p->n_head / p->n_kv_head > kAttnMaxGroup) return "attn_decode: more than 16 query heads per KV head";
  if (p->n_ctx <= 0 || p->n_ctx > p->capacity) return "attn_decode: n_ctx must be in [1, capacity]";
  if (p->q == nullptr || p->v == nullptr || p->out == nullptr) return "attn_decode: q, v or out is null";
  if (k8 && (p->k_q == nullptr || p->k_d == nullptr)) return "attn_decode: k8 needs k_q and k_d";
  if (!k8 && p->k_f16 == nullptr) return "attn_decode: f16 needs k_f16";
  if (p->scratch == nullptr) return "attn_decode: scratch is null (attn_decode_scratch_bytes)";
  const void* k = k8 ? static_cast<const void*>(p->k_q) : static_cast<const void*>(p->k_f16);
  if (reinterpret_cast<uintptr_t>(k) % 16 != 0) return "attn_decode: K payload is not 16-byte aligned";
  if (p->n_split < 0) return "attn_decode: n_split must be >= 0";
  return nullptr;
}

int attn_k8_decode_run(const attn_decode_params* p, void* stream) {
  return gpu_api_call("attn_k8_decode_run",
                      [&] { run_decode(*p, true, static_cast<alap_gpu_stream_t>(stream)); });
}

int attn_f16_decode_run(const attn_decode_params* p, void* stream) {
  return gpu_api_call("attn_f16_decode_run",
                      [&] { run_decode(*p, false, static_cast<alap_gpu_stream_t>(stream)); });
}

const char* gpu_error_message(void) { return gpu_error_slot().c_str(); }

}  // extern "C"

}  // namespace alap::gpu
