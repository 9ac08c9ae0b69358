// KV cache sizes per cache mode (DESIGN.md "KV cache formats (normative)"): f16 is 2 bytes a
// value; packed int8 is 1 byte a value plus one fp16 scale per block of 32 (or of head_dim when
// head_dim < 32). Arithmetic only: it allocates nothing and knows nothing of GGUF.
//
//   alap::KvShape s{.n_layer = 8, .n_head_kv = 2, .head_dim_k = 64, .head_dim_v = 64};
//   if (alap::packed_mode_supported(s, alap::CacheMode::k8, &why))
//     auto b = alap::kv_cache_bytes(s, alap::CacheMode::k8, 4096);  // b.k_bytes, b.v_bytes, b.total
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace alap {

// f16: K and V fp16. k8: K packed int8 + fp16 block scales, V fp16. k8v8: both packed.
enum class CacheMode { f16, k8, k8v8 };

const char* cache_mode_name(CacheMode mode);                    // "f16", "k8", "k8v8"
std::optional<CacheMode> parse_cache_mode(std::string_view name);  // the inverse; empty if unknown

struct KvShape {
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim_k = 0;
  int64_t head_dim_v = 0;
};

struct KvBytes {
  uint64_t k_bytes = 0;
  uint64_t v_bytes = 0;
  uint64_t total = 0;  // k_bytes + v_bytes
};

// Values per packed block for a head dimension: 32, or head_dim when 0 < head_dim < 32; 0 when
// head_dim is not a positive multiple of the block (the semantics of kernels::k8_block_size).
int64_t kv_packed_block_size(int64_t head_dim);

// Bytes of one head vector of head_dim values stored f16 (packed == false) or packed.
uint64_t kv_head_vector_bytes(int64_t head_dim, bool packed);

// False (with the reason in *why when why != nullptr) when a packed half of `mode` has a head
// dimension that is not a multiple of its block. f16 is always supported for valid shapes.
bool packed_mode_supported(const KvShape& shape, CacheMode mode, std::string* why);

// Exact bytes of the cache holding n_tokens tokens of every layer and KV head.
// Throws std::invalid_argument for negative shapes or a packed mode the shape does not support.
KvBytes kv_cache_bytes(const KvShape& shape, CacheMode mode, uint64_t n_tokens);

// Bytes for messages: "812.0 MiB" below 1 GiB, else "3.4 GiB".
std::string format_bytes(uint64_t bytes);

}  // namespace alap
