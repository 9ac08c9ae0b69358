// Model::load: checks every tensor the architecture needs (presence, exact shape, supported
// type) before anything large is allocated, then maps matrices in place and copies the small
// vectors (norms, biases, rope_freqs) to f32.
#include "core/model/model.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/huge_pages.h"

namespace alap {

namespace {

// What a tensor must be. Vectors are 1-D and read to f32; matrices stay where they are.
struct TensorSpec {
  std::string name;
  std::array<int64_t, 4> ne;
  bool required;
  bool matrix;
};

std::string shape_str(const std::array<int64_t, 4>& ne, uint32_t n_dims) {
  std::string s = "[";
  for (uint32_t i = 0; i < n_dims; ++i) {
    if (i) s += ", ";
    s += std::to_string(ne[i]);
  }
  return s + "]";
}

uint32_t dims_of(const std::array<int64_t, 4>& ne) {
  uint32_t d = 4;
  while (d > 1 && ne[d - 1] == 1) --d;
  return d;
}

// Returns the tensor or nullptr (optional and absent); throws for every other mismatch.
const gguf::TensorInfo* check_tensor(const gguf::File& f, const TensorSpec& s) {
  const gguf::TensorInfo* t = f.find_tensor(s.name);
  if (!t) {
    if (s.required) throw ModelError(f.name() + ": missing tensor " + s.name);
    return nullptr;
  }
  if (t->ne != s.ne) {
    throw ModelError(f.name() + ": tensor " + s.name + " has shape " + shape_str(t->ne, t->n_dims) + ", expected " +
                     shape_str(s.ne, dims_of(s.ne)));
  }
  const kernels::DTypeInfo* info = kernels::dtype_info(static_cast<uint32_t>(t->type));
  const char* tname = info ? info->name : "unknown";
  if (!info || !info->weights_supported) {
    throw ModelError(f.name() + ": " + s.name + " has type " + tname + ", which Alap does not support");
  }
  if (!s.matrix && t->type != kernels::DType::f32 && t->type != kernels::DType::f16 &&
      t->type != kernels::DType::bf16) {
    throw ModelError(f.name() + ": " + s.name + " has type " + tname + "; vectors must be F32, F16 or BF16");
  }
  return t;
}

kernels::WeightView view_of(const gguf::TensorInfo& t) {
  return kernels::WeightView{t.type, t.data, static_cast<size_t>(t.ne[1]), static_cast<size_t>(t.ne[0])};
}

std::vector<float> vector_of(const gguf::TensorInfo* t) {
  if (!t) return {};
  std::vector<float> v(static_cast<size_t>(t->ne[0]));
  kernels::dequantize_row(t->type, t->data, v.data(), v.size());
  return v;
}

}  // namespace

Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Model Model::load(const std::filesystem::path& path, const ModelOptions& options) {
  return from_file(gguf::File::open(path), options);
}

Model Model::from_file(gguf::File file, const ModelOptions& options) {
  Model m;
  m.file_ = std::make_unique<gguf::File>(std::move(file));
  const gguf::File& f = *m.file_;
  m.hp_ = read_hparams(f);
  // Each block has at least 9 tensors (2 norms, q, k, v, output, gate, up, down) beside the embedding
  // and the output norm: a block count the file cannot hold is refused before the checks below
  // list a spec for every one of its tensors.
  if (const auto n_tensors = static_cast<int64_t>(f.tensors().size()); m.hp_.n_layer > (n_tensors - 2) / 9) {
    throw ModelError(f.name() + ": block_count is " + std::to_string(m.hp_.n_layer) + " but the file holds only " +
                     std::to_string(n_tensors) + " tensors (each block needs at least 9)");
  }
  const ModelHParams& hp = m.hp_;
  const int64_t E = hp.n_embd, V = hp.n_vocab, F = hp.n_ff, H = hp.n_head, Hk = hp.n_head_kv;
  const int64_t Dk = hp.head_dim_k, Dv = hp.head_dim_v;
  const bool qwen2 = hp.arch == Arch::qwen2, qwen3 = hp.arch == Arch::qwen3;

  // 1. Every spec, checked before any allocation beyond this list.
  auto mat = [](std::string n, int64_t cols, int64_t rows, bool req = true) {
    return TensorSpec{std::move(n), {cols, rows, 1, 1}, req, true};
  };
  auto vec = [](std::string n, int64_t len, bool req = true) { return TensorSpec{std::move(n), {len, 1, 1, 1}, req, false}; };
  std::vector<TensorSpec> specs;
  specs.push_back(mat("token_embd.weight", E, V));
  specs.push_back(vec("output_norm.weight", E));
  specs.push_back(mat("output.weight", E, V, false));
  specs.push_back(vec("output.bias", V, false));
  specs.push_back(vec("rope_freqs.weight", hp.n_rot / 2, false));
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    specs.push_back(vec(b + "attn_norm.weight", E));
    specs.push_back(mat(b + "attn_q.weight", E, H * Dk));
    specs.push_back(mat(b + "attn_k.weight", E, Hk * Dk));
    specs.push_back(mat(b + "attn_v.weight", E, Hk * Dv));
    specs.push_back(mat(b + "attn_output.weight", H * Dv, E));
    specs.push_back(vec(b + "attn_q.bias", H * Dk, qwen2));
    specs.push_back(vec(b + "attn_k.bias", Hk * Dk, qwen2));
    specs.push_back(vec(b + "attn_v.bias", Hk * Dv, qwen2));
    specs.push_back(vec(b + "attn_output.bias", E, false));
    specs.push_back(vec(b + "attn_q_norm.weight", Dk, qwen3));
    specs.push_back(vec(b + "attn_k_norm.weight", Dk, qwen3));
    specs.push_back(vec(b + "ffn_norm.weight", E));
    specs.push_back(mat(b + "ffn_gate.weight", E, F));
    specs.push_back(mat(b + "ffn_up.weight", E, F));
    specs.push_back(mat(b + "ffn_down.weight", F, E));
  }
  std::vector<const gguf::TensorInfo*> found(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) found[i] = check_tensor(f, specs[i]);

  // 2. Map and copy, in the order of the specs above.
  size_t i = 0;
  auto next = [&]() { return found[i++]; };
  auto count = [&m](const gguf::TensorInfo* t) {
    if (!t) return;
    m.weights_bytes_ += t->n_bytes;
    m.n_params_ += static_cast<uint64_t>(t->n_elements());
  };
  for (const auto* t : found) count(t);

  ModelWeights& w = m.w_;
  w.token_embd = view_of(*next());
  w.output_norm = vector_of(next());
  const gguf::TensorInfo* out = next();
  w.tied_output = out == nullptr;
  w.output = out ? view_of(*out) : w.token_embd;
  w.output_bias = vector_of(next());
  w.rope_freqs = vector_of(next());
  for (float fi : w.rope_freqs) {
    if (!(fi > 0.0f)) throw ModelError(f.name() + ": rope_freqs.weight holds a divisor that is not > 0");
  }
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (auto& L : w.layers) {
    L.attn_norm = vector_of(next());
    L.wq = view_of(*next());
    L.wk = view_of(*next());
    L.wv = view_of(*next());
    L.wo = view_of(*next());
    L.bq = vector_of(next());
    L.bk = vector_of(next());
    L.bv = vector_of(next());
    L.bo = vector_of(next());
    L.q_norm = vector_of(next());
    L.k_norm = vector_of(next());
    L.ffn_norm = vector_of(next());
    L.w_gate = view_of(*next());
    L.w_up = view_of(*next());
    L.w_down = view_of(*next());
  }

  if (options.prefault) {
    volatile uint8_t sink = 0;
    for (const auto* t : found) {
      if (!t) continue;
      for (uint64_t off = 0; off < t->n_bytes; off += 4096) sink = sink + t->data[off];
    }
    (void)sink;
  }
  if (options.pack_cpu) m.pack_for_cpu(0, true);
  return m;
}

void Model::FreeDeleter::operator()(void* p) const { std::free(p); }

uint64_t Model::pack_for_cpu(size_t first_layer, bool output) {
  if (const char* env = std::getenv("ALAP_CPU_PACK"); env && std::strcmp(env, "0") == 0) return 0;
  // A matrix whose data already lies in one of our buffers was copied by an earlier call.
  auto own = [this](const void* p) {
    const auto* q = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < packed_.size(); ++i) {
      if (q >= packed_[i].get() && q < packed_[i].get() + own_bytes_[i]) return true;
    }
    return false;
  };
  // Packed where this CPU has a layout for the matrix; otherwise copied as it is (f32, the types
  // without a layout, every type on the scalar variant, row or column counts the layout does not
  // take), so that it too is streamed from huge pages.
  std::vector<kernels::WeightView*> todo;
  std::vector<bool> packs;
  auto want = [&](kernels::WeightView& v) {
    if (!v.data || v.packed || own(v.data)) return;
    todo.push_back(&v);
    packs.push_back(kernels::packed_bytes(v) > 0);
  };
  for (size_t l = first_layer; l < w_.layers.size(); ++l) {
    LayerWeights& L = w_.layers[l];
    for (kernels::WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) want(*v);
  }
  if (output) want(w_.output);  // a tied head gets its own copy; token_embd keeps the rows for lookups
  if (todo.empty()) return 0;

  // One buffer for every matrix (each at a 64-byte boundary), then the copies on all cores.
  // Decode streams it whole every token, so it asks for huge pages (alloc_streamed): fewer TLB
  // misses (a cold f16 model: 69-72% → 78-80% of the paired floor, one thread). Without the
  // memory for it the model still runs, from the file's mapping and layout.
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    offsets.push_back(total);
    total += ((packs[i] ? kernels::packed_bytes(*todo[i]) : kernels::matrix_bytes(*todo[i])) + 63) / 64 * 64;
  }
  std::unique_ptr<uint8_t, FreeDeleter> buf(static_cast<uint8_t*>(kernels::alloc_streamed(total)));
  if (!buf) return 0;
  std::vector<uint8_t*> bufs;
  for (uint64_t off : offsets) bufs.push_back(buf.get() + off);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < todo.size();) {
      if (packs[i]) {
        kernels::pack_weights(*todo[i], bufs[i]);
      } else {
        std::memcpy(bufs[i], todo[i]->data, kernels::matrix_bytes(*todo[i]));
      }
      // The original bytes are not read again by the CPU; their pages can go.
      file_->release_pages(todo[i]->data, kernels::matrix_bytes(*todo[i]));
    }
  };
  const size_t n_threads = std::min<size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n_threads; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < todo.size(); ++i) {
    if (packs[i]) {
      todo[i]->packed = bufs[i];
    } else {
      todo[i]->data = bufs[i];
    }
  }
  packed_.push_back(std::move(buf));
  own_bytes_.push_back(total);
  packed_bytes_ += total;
  return total;
}

}  // namespace alap
