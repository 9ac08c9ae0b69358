// How many prompt tokens a prefill batch takes (the forward pass's max_batch). On the GPU larger
// chunks keep the matrix units busier, but the pass's scratch grows with the chunk: plain C++ over a
// plan callback, so that the rule is tested without a device. On the CPU a chunk is also the unit
// between which a cancel is seen.
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

// The CPU's chunk: 128 tokens keep a cancel within a second or so on a laptop. Where the AMX tiles
// run the prefill products (`tiles`: kernels::amx_prefill_active()) with two threads or more, 256:
// each call's weight conversion and each product's hand-off between the threads then serve twice
// the tokens. 512-token prompts on a 2-vCPU Xeon with AMX, two threads: random Llama-3.2-1B Q4_K
// 1.11-1.13x the tokens/s, Qwen2.5-0.5B Q8_0 1.18-1.20x, Q4_K 1.07-1.10x, the eval model 1.06-1.19x;
// one thread 0.88x (Qwen2.5-0.5B Q8_0; there 256 tokens of its FFN's 4864-column activations
// exceed one 2 MiB chunk of tiles, so that product converts its weights twice: the likely cause,
// not measured apart) and the VNNI kernels level, so they keep 128 (docs/bench/cpu.md, "A group's
// activations as bf16 tiles once (session 55)"). At most n_ctx.
inline constexpr size_t kPrefillChunkCpu = 128;
inline constexpr size_t kPrefillChunkCpuTiles = 256;
size_t choose_cpu_prefill_chunk(size_t n_ctx, size_t n_threads, bool tiles);

}  // namespace alap
