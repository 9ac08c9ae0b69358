// Run-time check of the GPU decode attention (k8 and f16) and the k8 cache writer against a CPU
// reference in double precision, on random data over head_dim × GQA ratio × context × split.
// Needs a GPU: exits 77 (ctest: skipped) where none is present. Not a benchmark (one timing line
// is printed for orientation only). Plain C++: it reaches the GPU through gpu_port.h's host side.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/fp16.h"
#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"

namespace {

using alap::kernels::f32_to_fp16;
using alap::kernels::fp16_to_f32;

int g_failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

// A device buffer that frees itself.
template <class T>
struct device_buffer {
  T* ptr = nullptr;
  size_t n = 0;
  explicit device_buffer(size_t count) : n(count) { ALAP_GPU_CHECK(alap_gpu_malloc(&ptr, std::max<size_t>(1, n) * sizeof(T))); }
  explicit device_buffer(const std::vector<T>& host) : device_buffer(host.size()) {
    ALAP_GPU_CHECK(alap_gpu_memcpy(ptr, host.data(), n * sizeof(T), alap_gpu_memcpy_h2d));
  }
  ~device_buffer() { (void)alap_gpu_free(ptr); }  // no throwing from a destructor
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  std::vector<T> download() const {
    std::vector<T> host(n);
    ALAP_GPU_CHECK(alap_gpu_memcpy(host.data(), ptr, n * sizeof(T), alap_gpu_memcpy_d2h));
    return host;
  }
};

// The normative k8 rule for one block of 32: d = max|x|/127 (kept as fp16), q = round(x/d).
void quantize_block(const float* x, int8_t* q, uint16_t* d_bits) {
  float amax = 0.0f;
  for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  for (int i = 0; i < 32; ++i) {
    q[i] = d > 0.0f ? static_cast<int8_t>(std::clamp(std::round(x[i] / d), -127.0f, 127.0f)) : int8_t{0};
  }
  *d_bits = f32_to_fp16(d);
}

struct attn_case {
  int head_dim, n_kv_head, group, n_ctx, n_split;
};

// out[h][:] = Σ_j softmax_j(scale·score(h, j))·v[kv][j][:] in double.
template <class ScoreFn>
std::vector<double> reference(const attn_case& c, int capacity, const std::vector<uint16_t>& v, float scale,
                              ScoreFn score) {
  const int n_head = c.n_kv_head * c.group, hd = c.head_dim;
  std::vector<double> out(size_t(n_head) * hd, 0.0), s(c.n_ctx);
  for (int h = 0; h < n_head; ++h) {
    const int kv = h / c.group;
    double mx = -INFINITY;
    for (int j = 0; j < c.n_ctx; ++j) mx = std::max(mx, s[j] = scale * score(h, kv, j));
    double l = 0.0;
    for (int j = 0; j < c.n_ctx; ++j) l += (s[j] = std::exp(s[j] - mx));
    for (int j = 0; j < c.n_ctx; ++j) {
      const uint16_t* vr = v.data() + (size_t(kv) * capacity + j) * hd;
      for (int d = 0; d < hd; ++d) out[size_t(h) * hd + d] += s[j] / l * fp16_to_f32(vr[d]);
    }
  }
  return out;
}

template <class A, class B>
double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
  double e = 0.0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::fabs(double(a[i]) - double(b[i])));
  return e;
}

// One configuration: k8 store, k8 attention and f16 attention against their references.
void run_case(const attn_case& c, std::mt19937& rng) {
  const int hd = c.head_dim, n_kv = c.n_kv_head, n_head = n_kv * c.group, nb = hd / 32;
  const int capacity = c.n_ctx + 5;  // the layout stride is capacity, not n_ctx
  const float scale = 1.0f / std::sqrt(float(hd));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> row_scale(0.05f, 4.0f);

  // K rows token-major as the projection writes them, with a random scale per row and some zero
  // blocks (d = 0); V fp16; query fp32.
  std::vector<float> k_new(size_t(c.n_ctx) * n_kv * hd);
  for (int t = 0; t < c.n_ctx; ++t)
    for (int h = 0; h < n_kv; ++h) {
      const float rs = row_scale(rng);
      float* row = k_new.data() + (size_t(t) * n_kv + h) * hd;
      for (int d = 0; d < hd; ++d) row[d] = rs * normal(rng);
      if (t % 37 == 5) std::fill(row, row + 32, 0.0f);
    }
  std::vector<uint16_t> v(size_t(n_kv) * capacity * hd, 0), k_f16(size_t(n_kv) * capacity * hd, 0);
  for (int h = 0; h < n_kv; ++h)
    for (int t = 0; t < c.n_ctx; ++t)
      for (int d = 0; d < hd; ++d) {
        const size_t i = (size_t(h) * capacity + t) * hd + d;
        v[i] = f32_to_fp16(normal(rng));
        k_f16[i] = f32_to_fp16(k_new[(size_t(t) * n_kv + h) * hd + d]);
      }
  std::vector<float> q(size_t(n_head) * hd);
  for (float& x : q) x = 1.5f * normal(rng);

  // CPU quantisation of K into the normative layout.
  std::vector<int8_t> kq_ref(size_t(n_kv) * capacity * hd, 0);
  std::vector<uint16_t> kd_ref(size_t(n_kv) * capacity * nb, 0);
  for (int t = 0; t < c.n_ctx; ++t)
    for (int h = 0; h < n_kv; ++h)
      for (int b = 0; b < nb; ++b) {
        const size_t row = size_t(h) * capacity + t;
        quantize_block(k_new.data() + (size_t(t) * n_kv + h) * hd + b * 32, kq_ref.data() + row * hd + b * 32,
                       kd_ref.data() + row * nb + b);
      }

  // GPU store in two calls (pos0 = 0 and pos0 = half) into a zeroed cache.
  device_buffer<float> d_k_new(k_new);
  device_buffer<int8_t> d_kq(kq_ref.size());
  device_buffer<uint16_t> d_kd(kd_ref.size());
  ALAP_GPU_CHECK(alap_gpu_memset(d_kq.ptr, 0, kq_ref.size()));
  ALAP_GPU_CHECK(alap_gpu_memset(d_kd.ptr, 0, kd_ref.size() * 2));
  const int half = c.n_ctx / 2;
  alap::gpu::kv_k8_store_params sp{d_k_new.ptr, d_kq.ptr, d_kd.ptr, half, n_kv, hd, capacity, 0};
  expect(alap::gpu::kv_k8_store_run(&sp, nullptr) == 0, alap::gpu::gpu_error_message());
  sp.k_new = d_k_new.ptr + size_t(half) * n_kv * hd;
  sp.n_tokens = c.n_ctx - half;
  sp.pos0 = half;
  expect(alap::gpu::kv_k8_store_run(&sp, nullptr) == 0, alap::gpu::gpu_error_message());
  const std::vector<int8_t> kq_gpu = d_kq.download();
  const std::vector<uint16_t> kd_gpu = d_kd.download();
  const std::string tag = "hd=" + std::to_string(hd) + " kv=" + std::to_string(n_kv) + " G=" +
                          std::to_string(c.group) + " ctx=" + std::to_string(c.n_ctx) + " split=" +
                          std::to_string(c.n_split);
  expect(kq_gpu == kq_ref, "kv_k8_store payload differs from the CPU rule, " + tag);
  expect(kd_gpu == kd_ref, "kv_k8_store scales differ from the CPU rule, " + tag);

  // References: k8 (quantised query and K, int32 block sums), f16 (fp32 q · fp16 K), exact (fp32).
  std::vector<int8_t> qq(q.size());
  std::vector<float> dq(size_t(n_head) * nb);
  for (int h = 0; h < n_head; ++h)
    for (int b = 0; b < nb; ++b) {
      uint16_t bits = 0;
      quantize_block(q.data() + size_t(h) * hd + b * 32, qq.data() + size_t(h) * hd + b * 32, &bits);
      dq[size_t(h) * nb + b] = fp16_to_f32(bits);
    }
  const auto ref_k8 = reference(c, capacity, v, scale, [&](int h, int kv, int j) {
    const size_t row = size_t(kv) * capacity + j;
    double s = 0.0;
    for (int b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (int i = 0; i < 32; ++i) isum += int32_t(qq[size_t(h) * hd + b * 32 + i]) * kq_ref[row * hd + b * 32 + i];
      s += double(dq[size_t(h) * nb + b]) * fp16_to_f32(kd_ref[row * nb + b]) * isum;
    }
    return s;
  });
  const auto ref_f16 = reference(c, capacity, v, scale, [&](int h, int kv, int j) {
    double s = 0.0;
    for (int d = 0; d < hd; ++d) s += double(q[size_t(h) * hd + d]) * fp16_to_f32(k_f16[(size_t(kv) * capacity + j) * hd + d]);
    return s;
  });
  const auto ref_exact = reference(c, capacity, v, scale, [&](int h, int kv, int j) {
    double s = 0.0;
    for (int d = 0; d < hd; ++d) s += double(q[size_t(h) * hd + d]) * k_new[(size_t(j) * n_kv + kv) * hd + d];
    return s;
  });

  // GPU attention, both modes.
  device_buffer<float> d_q(q);
  device_buffer<uint16_t> d_v(v), d_kf16(k_f16);
  device_buffer<float> d_out(q.size());
  device_buffer<char> d_scratch(alap::gpu::attn_decode_scratch_bytes(n_head, hd));
  alap::gpu::attn_decode_params p{};
  p.q = d_q.ptr;
  p.k_q = d_kq.ptr;
  p.k_d = d_kd.ptr;
  p.k_f16 = d_kf16.ptr;
  p.v = d_v.ptr;
  p.out = d_out.ptr;
  p.scratch = d_scratch.ptr;
  p.n_head = n_head;
  p.n_kv_head = n_kv;
  p.head_dim = hd;
  p.capacity = capacity;
  p.n_ctx = c.n_ctx;
  p.n_split = c.n_split;
  p.scale = scale;
  expect(alap::gpu::attn_k8_decode_run(&p, nullptr) == 0, alap::gpu::gpu_error_message());
  ALAP_GPU_CHECK(alap_gpu_device_synchronize());
  const std::vector<float> out_k8 = d_out.download();
  expect(alap::gpu::attn_f16_decode_run(&p, nullptr) == 0, alap::gpu::gpu_error_message());
  ALAP_GPU_CHECK(alap_gpu_device_synchronize());
  const std::vector<float> out_f16 = d_out.download();

  const double e_k8 = max_abs_diff(out_k8, ref_k8);
  const double e_f16 = max_abs_diff(out_f16, ref_f16);
  const double e_k8_exact = max_abs_diff(out_k8, ref_exact);
  const double e_ref_exact = max_abs_diff(ref_k8, ref_exact);
  std::printf("%-40s k8 %.2e (vs exact %.2e, ref k8 vs exact %.2e)  f16 %.2e\n", tag.c_str(), e_k8, e_k8_exact,
              e_ref_exact, e_f16);
  expect(e_k8 < 1e-4, "k8 output differs from the k8 reference, " + tag);
  expect(e_f16 < 1e-4, "f16 output differs from the f16 reference, " + tag);
  // FlashAttention's rule: the fast kernel's error at most twice a same-precision reference's.
  expect(e_k8_exact <= 2.0 * e_ref_exact + 1e-5, "k8 error vs exact exceeds twice the reference's, " + tag);
}

void check_bad_input() {
  alap::gpu::attn_decode_params p{};
  alap::gpu::kv_k8_store_params sp{};
  p.n_head = 8;
  p.n_kv_head = 2;
  p.head_dim = 80;
  p.capacity = 16;
  p.n_ctx = 4;
  expect(alap::gpu::attn_k8_decode_run(&p, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "head_dim") != nullptr,
         "head_dim 80 must be refused with a message naming head_dim");
  p.head_dim = 64;
  p.n_ctx = 0;
  expect(alap::gpu::attn_f16_decode_run(&p, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "n_ctx") != nullptr,
         "n_ctx 0 must be refused with a message naming n_ctx");
  sp.n_tokens = 4;
  sp.n_kv_head = 1;
  sp.head_dim = 64;
  sp.capacity = 8;
  sp.pos0 = 6;
  expect(alap::gpu::kv_k8_store_run(&sp, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "capacity") != nullptr,
         "a store past capacity must be refused");
}

// One timing line at a Llama-3-8B-like shape, for orientation (not asserted).
void print_timing() {
  const int n_head = 32, n_kv = 8, hd = 128, ctx = 4096;
  device_buffer<float> q(size_t(n_head) * hd), out(size_t(n_head) * hd);
  device_buffer<int8_t> kq(size_t(n_kv) * ctx * hd);
  device_buffer<uint16_t> kd(size_t(n_kv) * ctx * hd / 32), kf(size_t(n_kv) * ctx * hd), v(size_t(n_kv) * ctx * hd);
  device_buffer<char> scratch(alap::gpu::attn_decode_scratch_bytes(n_head, hd));
  for (void* ptr : {static_cast<void*>(q.ptr), static_cast<void*>(kq.ptr), static_cast<void*>(kd.ptr),
                    static_cast<void*>(kf.ptr), static_cast<void*>(v.ptr)})
    ALAP_GPU_CHECK(alap_gpu_memset(ptr, 0, 16));
  alap::gpu::attn_decode_params p{q.ptr, kq.ptr, kd.ptr, kf.ptr, v.ptr, out.ptr, scratch.ptr, n_head, n_kv, hd,
                                  ctx, ctx, 0, 0.088f};
  alap_gpu_event_t start, stop;
  ALAP_GPU_CHECK(alap_gpu_event_create(&start));
  ALAP_GPU_CHECK(alap_gpu_event_create(&stop));
  for (int k8 = 1; k8 >= 0; --k8) {
    auto run = [&] { return k8 ? alap::gpu::attn_k8_decode_run(&p, nullptr) : alap::gpu::attn_f16_decode_run(&p, nullptr); };
    for (int i = 0; i < 5; ++i) run();
    ALAP_GPU_CHECK(alap_gpu_event_record(start, nullptr));
    const int reps = 50;
    for (int i = 0; i < reps; ++i) run();
    ALAP_GPU_CHECK(alap_gpu_event_record(stop, nullptr));
    ALAP_GPU_CHECK(alap_gpu_event_synchronize(stop));
    float ms = 0.0f;
    ALAP_GPU_CHECK(alap_gpu_event_elapsed_ms(&ms, start, stop));
    std::printf("timing %s: n_head=32 n_kv_head=8 head_dim=128 ctx=4096: %.1f us per call\n", k8 ? "k8 " : "f16",
                1000.0 * ms / reps);
  }
  ALAP_GPU_CHECK(alap_gpu_event_destroy(start));
  ALAP_GPU_CHECK(alap_gpu_event_destroy(stop));
}

}  // namespace

int main() {
  int n_dev = 0;
  if (alap_gpu_get_device_count(&n_dev) != alap_gpu_success || n_dev == 0) {
    std::printf("SKIP: no GPU device\n");
    return 77;
  }
  alap_gpu_device_prop_t prop{};
  ALAP_GPU_CHECK(alap_gpu_get_device_properties(&prop, 0));
  size_t free_b = 0, total_b = 0;
  ALAP_GPU_CHECK(alap_gpu_mem_get_info(&free_b, &total_b));
  std::printf("device: %s, %d multiprocessors, warp %d, %.1f of %.1f GiB free\n", prop.name,
              prop.multiProcessorCount, prop.warpSize, free_b / 1073741824.0, total_b / 1073741824.0);
  try {
    check_bad_input();
    std::mt19937 rng(20240611);
    std::vector<attn_case> cases;
    for (int hd : {64, 128})
      for (int group : {1, 4, 8})
        for (int ctx : {1, 31, 127, 128, 129, 1000, 4097, 5000})
          for (int split : {0, 1, 7}) cases.push_back({hd, 2, group, ctx, split});
    // Edges: the smallest and largest head_dim, a 7:1 group (Qwen2.5), the largest group, many splits.
    cases.push_back({32, 3, 2, 300, 0});
    cases.push_back({256, 2, 4, 777, 0});
    cases.push_back({256, 1, 16, 2000, 5});
    cases.push_back({128, 2, 7, 3001, 0});
    cases.push_back({64, 4, 16, 5000, 64});
    cases.push_back({96, 2, 3, 450, 2});
    for (const attn_case& c : cases) run_case(c, rng);
    print_timing();
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s: %d failure(s)\n", g_failures == 0 ? "PASS" : "FAIL", g_failures);
  return g_failures == 0 ? 0 : 1;
}
