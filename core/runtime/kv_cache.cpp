// KvCache: one zeroed allocation holding, per layer, the K payload, K scales, V payload and V
// scales arrays of the normative layout (kv_cache.h), each 16-byte aligned.
#include "core/runtime/kv_cache.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "alap/kernels/fp16.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/kv_k8.h"

namespace alap {

namespace {

constexpr size_t kArrayAlign = 16;  // the normative alignment of each array

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

}  // namespace

KvCache::KvCache(const KvCacheConfig& config) : cfg_(config) {
  if (cfg_.n_layer == 0 || cfg_.n_head_kv == 0 || cfg_.head_dim_k == 0 || cfg_.head_dim_v == 0 ||
      cfg_.capacity == 0) {
    throw KvCacheError("KV cache: n_layer, n_head_kv, head dims and capacity must all be > 0");
  }
  const char* mode = cache_mode_name(cfg_.mode);
  if (k_packed()) {
    block_k_ = kernels::k8_block_size(cfg_.head_dim_k);
    if (block_k_ == 0) {
      throw KvCacheError(std::string("KV cache mode ") + mode + " needs a K head_dim that is a multiple of 32 (or below 32); this model has head_dim " +
                         std::to_string(cfg_.head_dim_k) + ": use --cache f16");
    }
  }
  if (v_packed()) {
    block_v_ = kernels::k8_block_size(cfg_.head_dim_v);
    if (block_v_ == 0) {
      throw KvCacheError(std::string("KV cache mode ") + mode + " needs a V head_dim that is a multiple of 32 (or below 32); this model has head_dim " +
                         std::to_string(cfg_.head_dim_v) + ": use --cache f16 or k8");
    }
  }
  const size_t rows = cfg_.n_head_kv * cfg_.capacity;  // [n_head_kv][capacity]
  KvLayerLayout& L = layout0_;
  size_t off = 0;
  L.k_offset = off;
  L.k_bytes = rows * cfg_.head_dim_k * (k_packed() ? 1 : 2);
  off = align_up(off + L.k_bytes, kArrayAlign);
  L.k_scales_offset = off;
  L.k_scales_bytes = k_packed() ? rows * (cfg_.head_dim_k / block_k_) * 2 : 0;
  off = align_up(off + L.k_scales_bytes, kArrayAlign);
  L.v_offset = off;
  L.v_bytes = rows * cfg_.head_dim_v * (v_packed() ? 1 : 2);
  off = align_up(off + L.v_bytes, kArrayAlign);
  L.v_scales_offset = off;
  L.v_scales_bytes = v_packed() ? rows * (cfg_.head_dim_v / block_v_) * 2 : 0;
  off = align_up(off + L.v_scales_bytes, kArrayAlign);
  layer_stride_ = off;
  total_bytes_ = layer_stride_ * cfg_.n_layer;
  // Decode reads every layer's rows each token: the buffer asks for huge pages (kernels/huge_pages.h).
  data_ = static_cast<uint8_t*>(kernels::alloc_streamed(total_bytes_));
  if (!data_) {
    throw KvCacheError("KV cache: cannot allocate " + std::to_string(total_bytes_) + " bytes for " +
                       std::to_string(cfg_.capacity) + " tokens");
  }
  std::memset(data_, 0, total_bytes_);
}

KvCache::~KvCache() { std::free(data_); }

KvCache::KvCache(KvCache&& o) noexcept
    : cfg_(o.cfg_),
      block_k_(o.block_k_),
      block_v_(o.block_v_),
      n_tokens_(o.n_tokens_),
      layout0_(o.layout0_),
      layer_stride_(o.layer_stride_),
      total_bytes_(o.total_bytes_),
      data_(std::exchange(o.data_, nullptr)) {
  o.total_bytes_ = 0;
  o.n_tokens_ = 0;
}

KvCache& KvCache::operator=(KvCache&& o) noexcept {
  if (this != &o) {
    std::free(data_);
    cfg_ = o.cfg_;
    block_k_ = o.block_k_;
    block_v_ = o.block_v_;
    n_tokens_ = o.n_tokens_;
    layout0_ = o.layout0_;
    layer_stride_ = o.layer_stride_;
    total_bytes_ = o.total_bytes_;
    data_ = std::exchange(o.data_, nullptr);
    o.total_bytes_ = 0;
    o.n_tokens_ = 0;
  }
  return *this;
}

void KvCache::set_n_tokens(size_t n) {
  if (n > cfg_.capacity) {
    throw KvCacheError("KV cache: " + std::to_string(n) + " tokens exceed the capacity of " +
                       std::to_string(cfg_.capacity));
  }
  n_tokens_ = n;
}

void KvCache::truncate(size_t n) {
  if (n > n_tokens_) {
    throw KvCacheError("KV cache: cannot truncate to " + std::to_string(n) + " tokens, it holds " +
                       std::to_string(n_tokens_));
  }
  n_tokens_ = n;
}

KvLayerLayout KvCache::layer_layout(size_t layer) const {
  KvLayerLayout L = layout0_;
  const size_t base = layer * layer_stride_;
  L.k_offset += base;
  L.k_scales_offset += base;
  L.v_offset += base;
  L.v_scales_offset += base;
  return L;
}

KvShape KvCache::shape() const {
  KvShape s{};
  s.n_layer = static_cast<int64_t>(cfg_.n_layer);
  s.n_head_kv = static_cast<int64_t>(cfg_.n_head_kv);
  s.head_dim_k = static_cast<int64_t>(cfg_.head_dim_k);
  s.head_dim_v = static_cast<int64_t>(cfg_.head_dim_v);
  return s;
}

void KvCache::store(size_t layer, size_t pos, const float* k, const float* v) {
  store_heads(layer, pos, 0, cfg_.n_head_kv, k, v);
}

void KvCache::store_heads(size_t layer, size_t pos, size_t g0, size_t g1, const float* k, const float* v) {
  if (g0 > g1 || g1 > cfg_.n_head_kv) {
    throw KvCacheError("KV cache: store of KV heads " + std::to_string(g0) + ".." + std::to_string(g1) + " of " +
                       std::to_string(cfg_.n_head_kv));
  }
  if (layer >= cfg_.n_layer || pos >= cfg_.capacity) {
    throw KvCacheError("KV cache: store at layer " + std::to_string(layer) + " position " + std::to_string(pos) +
                       " is outside " + std::to_string(cfg_.n_layer) + " layers x " +
                       std::to_string(cfg_.capacity) + " tokens");
  }
  const size_t dk = cfg_.head_dim_k, dv = cfg_.head_dim_v;
  uint8_t* base = data_ + layer * layer_stride_;
  for (size_t g = g0; g < g1; ++g) {
    const size_t row = g * cfg_.capacity + pos;  // [n_head_kv][capacity]
    if (k_packed()) {
      auto* q = reinterpret_cast<int8_t*>(base + layout0_.k_offset) + row * dk;
      auto* d = reinterpret_cast<uint16_t*>(base + layout0_.k_scales_offset) + row * (dk / block_k_);
      kernels::k8_quantize(k + g * dk, dk, q, d);
    } else {
      auto* h = reinterpret_cast<uint16_t*>(base + layout0_.k_offset) + row * dk;
      kernels::kv_row_to_fp16(k + g * dk, dk, h);
    }
    if (v_packed()) {
      auto* q = reinterpret_cast<int8_t*>(base + layout0_.v_offset) + row * dv;
      auto* d = reinterpret_cast<uint16_t*>(base + layout0_.v_scales_offset) + row * (dv / block_v_);
      kernels::k8_quantize(v + g * dv, dv, q, d);
    } else {
      auto* h = reinterpret_cast<uint16_t*>(base + layout0_.v_offset) + row * dv;
      kernels::kv_row_to_fp16(v + g * dv, dv, h);
    }
  }
}

const uint16_t* KvCache::k_f16(size_t layer, size_t head) const {
  if (k_packed()) return nullptr;
  return reinterpret_cast<const uint16_t*>(data_ + layer * layer_stride_ + layout0_.k_offset) +
         head * cfg_.capacity * cfg_.head_dim_k;
}

const int8_t* KvCache::k_q8(size_t layer, size_t head) const {
  if (!k_packed()) return nullptr;
  return reinterpret_cast<const int8_t*>(data_ + layer * layer_stride_ + layout0_.k_offset) +
         head * cfg_.capacity * cfg_.head_dim_k;
}

const uint16_t* KvCache::k_scales(size_t layer, size_t head) const {
  if (!k_packed()) return nullptr;
  return reinterpret_cast<const uint16_t*>(data_ + layer * layer_stride_ + layout0_.k_scales_offset) +
         head * cfg_.capacity * (cfg_.head_dim_k / block_k_);
}

const uint16_t* KvCache::v_f16(size_t layer, size_t head) const {
  if (v_packed()) return nullptr;
  return reinterpret_cast<const uint16_t*>(data_ + layer * layer_stride_ + layout0_.v_offset) +
         head * cfg_.capacity * cfg_.head_dim_v;
}

const int8_t* KvCache::v_q8(size_t layer, size_t head) const {
  if (!v_packed()) return nullptr;
  return reinterpret_cast<const int8_t*>(data_ + layer * layer_stride_ + layout0_.v_offset) +
         head * cfg_.capacity * cfg_.head_dim_v;
}

const uint16_t* KvCache::v_scales(size_t layer, size_t head) const {
  if (!v_packed()) return nullptr;
  return reinterpret_cast<const uint16_t*>(data_ + layer * layer_stride_ + layout0_.v_scales_offset) +
         head * cfg_.capacity * (cfg_.head_dim_v / block_v_);
}

void KvCache::read_k(size_t layer, size_t head, size_t pos, float* out) const {
  const size_t dk = cfg_.head_dim_k;
  if (k_packed()) {
    kernels::k8_dequantize(k_q8(layer, head) + pos * dk, k_scales(layer, head) + pos * (dk / block_k_), dk, out);
  } else {
    kernels::fp16_to_f32_row(k_f16(layer, head) + pos * dk, out, dk);
  }
}

void KvCache::read_v(size_t layer, size_t head, size_t pos, float* out) const {
  const size_t dv = cfg_.head_dim_v;
  if (v_packed()) {
    kernels::k8_dequantize(v_q8(layer, head) + pos * dv, v_scales(layer, head) + pos * (dv / block_v_), dv, out);
  } else {
    kernels::fp16_to_f32_row(v_f16(layer, head) + pos * dv, out, dv);
  }
}

}  // namespace alap
