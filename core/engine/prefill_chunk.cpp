#include "core/engine/prefill_chunk.h"

#include <algorithm>

namespace alap {

size_t choose_gpu_prefill_chunk(size_t n_ctx, int32_t n_layer, uint64_t weights_bytes, uint64_t usable,
                                const std::function<PrefillChunkPlan(size_t)>& plan) {
  const size_t base = std::min(kPrefillChunkGpu, n_ctx);
  const PrefillChunkPlan at_base = plan(base);
  if (at_base.n_gpu_layers < n_layer) return base;  // a partial offload keeps its own batch
  const uint64_t allowance = std::max(weights_bytes / 8, kPrefillChunkExtraFloor);
  for (const size_t want : kPrefillChunksGpuLarger) {
    const size_t chunk = std::min(want, n_ctx);
    if (chunk <= base) continue;
    const PrefillChunkPlan p = plan(chunk);
    if (p.n_gpu_layers < n_layer || p.total_bytes > usable) continue;
    if (p.total_bytes > at_base.total_bytes && p.total_bytes - at_base.total_bytes > allowance) continue;
    return chunk;
  }
  return base;
}

size_t choose_cpu_prefill_chunk(size_t n_ctx, size_t n_threads, bool tiles) {
  return std::min(tiles && n_threads >= 2 ? kPrefillChunkCpuTiles : kPrefillChunkCpu, n_ctx);
}

}  // namespace alap
