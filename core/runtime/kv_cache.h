// The KV cache in the three normative modes of DESIGN.md "KV cache formats": f16, k8 (K packed
// int8 + fp16 scales, V fp16), k8v8 (both packed). Host memory, struct-of-arrays per layer.
// Not the attention arithmetic (core/model/forward.cpp) nor the byte formulas (memory_plan.h).
//
//   alap::KvCache cache({.mode = alap::CacheMode::k8, .n_layer = 8, .n_head_kv = 2,
//                        .head_dim_k = 64, .head_dim_v = 64, .capacity = 512});
//   cache.store(layer, pos, k /*[n_head_kv][head_dim_k]*/, v /*[n_head_kv][head_dim_v]*/);
//   const int8_t* kq = cache.k_q8(layer, g);     // [capacity][head_dim_k] int8, row j = position j
//   const uint16_t* kd = cache.k_scales(layer, g); // [capacity][head_dim_k / block] fp16
//   cache.set_n_tokens(pos + 1); ... cache.truncate(n_keep);  // prefix reuse
//
// Layout, per layer l (each array starts 16-byte aligned; in the order below):
//   K payload  [n_head_kv][capacity][head_dim_k]   fp16 (f16) or int8 (k8, k8v8)
//   K scales   [n_head_kv][capacity][head_dim_k/block] fp16   (k8, k8v8 only)
//   V payload  [n_head_kv][capacity][head_dim_v]   fp16 (f16, k8) or int8 (k8v8)
//   V scales   [n_head_kv][capacity][head_dim_v/block] fp16   (k8v8 only)
// block = kernels::k8_block_size(head_dim) (32, or head_dim when < 32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/runtime/memory_plan.h"

namespace alap {

class KvCacheError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KvCacheConfig {
  CacheMode mode = CacheMode::f16;
  size_t n_layer = 0;
  size_t n_head_kv = 0;
  size_t head_dim_k = 0;
  size_t head_dim_v = 0;
  size_t capacity = 0;  // tokens
};

// Byte offsets (from data()) of one layer's four arrays; scales offsets are meaningful only in
// packed modes (their sizes are 0 otherwise).
struct KvLayerLayout {
  size_t k_offset = 0, k_bytes = 0;
  size_t k_scales_offset = 0, k_scales_bytes = 0;
  size_t v_offset = 0, v_bytes = 0;
  size_t v_scales_offset = 0, v_scales_bytes = 0;
};

class KvCache {
 public:
  // Allocates (zeroed) capacity tokens. Throws KvCacheError when a size is 0, or a packed mode
  // is asked for with a head_dim that is not a multiple of the block (names the head_dim).
  explicit KvCache(const KvCacheConfig& config);
  ~KvCache();
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const KvCacheConfig& config() const { return cfg_; }
  CacheMode mode() const { return cfg_.mode; }
  size_t capacity() const { return cfg_.capacity; }
  size_t n_layer() const { return cfg_.n_layer; }
  size_t n_head_kv() const { return cfg_.n_head_kv; }
  size_t head_dim_k() const { return cfg_.head_dim_k; }
  size_t head_dim_v() const { return cfg_.head_dim_v; }
  bool k_packed() const { return cfg_.mode != CacheMode::f16; }
  bool v_packed() const { return cfg_.mode == CacheMode::k8v8; }
  size_t block_k() const { return block_k_; }  // values per scale in K (packed modes), else 0
  size_t block_v() const { return block_v_; }  // values per scale in V (k8v8), else 0

  // Positions [0, n_tokens) hold valid entries.
  size_t n_tokens() const { return n_tokens_; }
  void set_n_tokens(size_t n);       // n <= capacity
  void truncate(size_t n);           // keeps the first n tokens (n <= n_tokens); prefix reuse
  void clear() { n_tokens_ = 0; }

  // Writes position pos of layer `layer` for all KV heads: k [n_head_kv][head_dim_k] f32,
  // v [n_head_kv][head_dim_v] f32 (already RoPE'd K). Packed halves use kernels::k8_quantize.
  // Does not change n_tokens (the forward pass sets it once the batch is done).
  void store(size_t layer, size_t pos, const float* k, const float* v);
  // The same for KV heads [g0, g1) only (k and v still hold all heads; the others are not read):
  // a decode step split by KV groups stores each group on the thread that computed it.
  void store_heads(size_t layer, size_t pos, size_t g0, size_t g1, const float* k, const float* v);

  // Read access, per (layer, kv head): row j of each array is position j.
  const uint16_t* k_f16(size_t layer, size_t head) const;     // [capacity][head_dim_k]   (f16 mode)
  const int8_t* k_q8(size_t layer, size_t head) const;        // [capacity][head_dim_k]   (k8, k8v8)
  const uint16_t* k_scales(size_t layer, size_t head) const;  // [capacity][head_dim_k/block_k]
  const uint16_t* v_f16(size_t layer, size_t head) const;     // [capacity][head_dim_v]   (f16, k8)
  const int8_t* v_q8(size_t layer, size_t head) const;        // [capacity][head_dim_v]   (k8v8)
  const uint16_t* v_scales(size_t layer, size_t head) const;  // [capacity][head_dim_v/block_v]

  // Dequantised/converted copies of one entry (tests, comparisons): out [head_dim_k] / [head_dim_v].
  void read_k(size_t layer, size_t head, size_t pos, float* out) const;
  void read_v(size_t layer, size_t head, size_t pos, float* out) const;

  // The raw allocation and where each layer's arrays lie in it.
  const uint8_t* data() const { return data_; }
  KvLayerLayout layer_layout(size_t layer) const;
  size_t allocated_bytes() const { return total_bytes_; }

  // The shape handed to memory_plan's kv_cache_bytes.
  KvShape shape() const;

 private:
  KvCacheConfig cfg_;
  size_t block_k_ = 0, block_v_ = 0;
  size_t n_tokens_ = 0;
  KvLayerLayout layout0_;  // layer 0; layer l is layout0_ shifted by l * layer_stride_
  size_t layer_stride_ = 0;
  size_t total_bytes_ = 0;
  uint8_t* data_ = nullptr;
};

}  // namespace alap
