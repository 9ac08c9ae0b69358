// How many prompt tokens a prefill batch takes on the GPU (the forward pass's max_batch): larger
// chunks keep the matrix units busier, but the pass's scratch grows with the chunk. Plain C++ over
// a plan callback, so that the rule is tested without a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace alap {

// The chunk every GPU load can take (512 tokens, or the whole context when shorter), and the
// larger ones tried first, largest first.
inline constexpr size_t kPrefillChunkGpu = 512;
inline constexpr size_t kPrefillChunksGpuLarger[] = {2048, 1024};
// A larger chunk may cost at most this much more device memory than the base chunk: the larger of
// an eighth of the weights and 256 MiB.
inline constexpr uint64_t kPrefillChunkExtraFloor = 256ull << 20;

struct PrefillChunkPlan {
  int32_t n_gpu_layers = 0;  // layers that fit on the device with this chunk
  uint64_t total_bytes = 0;  // weights + cache + scratch
};

// The largest chunk of kPrefillChunksGpuLarger (each capped at n_ctx) above the base chunk whose plan
// keeps as many layers on the device as the base chunk's (all of them), fits `usable` bytes and
// costs at most max(weights_bytes / 8, kPrefillChunkExtraFloor) more than the base chunk's plan;
// else the base chunk, min(kPrefillChunkGpu, n_ctx). `plan` gives the plan for a chunk.
size_t choose_gpu_prefill_chunk(size_t n_ctx, int32_t n_layer, uint64_t weights_bytes, uint64_t usable,
                                const std::function<PrefillChunkPlan(size_t)>& plan);

}  // namespace alap
