// KV cache size arithmetic of DESIGN.md's normative layout (see memory_plan.h). Not the cache.
#include "core/runtime/memory_plan.h"

#include <cstdio>
#include <stdexcept>

namespace alap {

namespace {

constexpr int64_t kPackedBlock = 32;  // values per fp16 scale (DESIGN.md)

bool k_packed(CacheMode m) { return m == CacheMode::k8 || m == CacheMode::k8v8; }
bool v_packed(CacheMode m) { return m == CacheMode::k8v8; }

uint64_t mul_checked(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::invalid_argument("KV cache size overflows 64 bits");
  return r;
}

}  // namespace

const char* cache_mode_name(CacheMode mode) {
  switch (mode) {
    case CacheMode::f16: return "f16";
    case CacheMode::k8: return "k8";
    case CacheMode::k8v8: return "k8v8";
  }
  return "unknown";
}

std::optional<CacheMode> parse_cache_mode(std::string_view name) {
  if (name == "f16") return CacheMode::f16;
  if (name == "k8") return CacheMode::k8;
  if (name == "k8v8") return CacheMode::k8v8;
  return std::nullopt;
}

int64_t kv_packed_block_size(int64_t head_dim) {
  if (head_dim <= 0) return 0;
  const int64_t block = head_dim < kPackedBlock ? head_dim : kPackedBlock;
  return head_dim % block == 0 ? block : 0;
}

uint64_t kv_head_vector_bytes(int64_t head_dim, bool packed) {
  if (head_dim < 0) throw std::invalid_argument("negative head dimension");
  const auto d = static_cast<uint64_t>(head_dim);
  if (!packed) return 2 * d;  // fp16
  const int64_t block = kv_packed_block_size(head_dim);
  if (block == 0) {
    throw std::invalid_argument("head dimension " + std::to_string(head_dim) + " is not a multiple of the packed block");
  }
  return d + 2 * (d / static_cast<uint64_t>(block));  // int8 values + one fp16 scale per block
}

bool packed_mode_supported(const KvShape& s, CacheMode mode, std::string* why) {
  auto refuse = [&](const char* half, int64_t head_dim) {
    if (why) {
      *why = std::string("cache mode ") + cache_mode_name(mode) + " needs the " + half + " head dimension (" +
             std::to_string(head_dim) + ") to be a multiple of 32 or a positive number below 32";
    }
    return false;
  };
  if (s.n_layer < 0 || s.n_head_kv < 0 || s.head_dim_k < 0 || s.head_dim_v < 0) {
    if (why) *why = "the KV shape has a negative size";
    return false;
  }
  if (k_packed(mode) && kv_packed_block_size(s.head_dim_k) == 0) return refuse("K", s.head_dim_k);
  if (v_packed(mode) && kv_packed_block_size(s.head_dim_v) == 0) return refuse("V", s.head_dim_v);
  return true;
}

KvBytes kv_cache_bytes(const KvShape& s, CacheMode mode, uint64_t n_tokens) {
  std::string why;
  if (!packed_mode_supported(s, mode, &why)) throw std::invalid_argument(why);
  // K: [n_layer][n_head_kv][n_tokens] head vectors; V the same with head_dim_v.
  const uint64_t vectors = mul_checked(mul_checked(static_cast<uint64_t>(s.n_layer), static_cast<uint64_t>(s.n_head_kv)), n_tokens);
  KvBytes b;
  b.k_bytes = mul_checked(vectors, kv_head_vector_bytes(s.head_dim_k, k_packed(mode)));
  b.v_bytes = mul_checked(vectors, kv_head_vector_bytes(s.head_dim_v, v_packed(mode)));
  if (__builtin_add_overflow(b.k_bytes, b.v_bytes, &b.total)) throw std::invalid_argument("KV cache size overflows 64 bits");
  return b;
}

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(1ull << 20));
  }
  return buf;
}

}  // namespace alap
