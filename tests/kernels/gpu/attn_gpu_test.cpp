// Run-time check of the GPU attention (decode: f16, k8, k8v8; prefill: k8 and k8v8) and the k8 cache
// writer against a CPU reference in double precision, on random data over head_dim × GQA ratio ×
// context (odd lengths included) × split. Needs a GPU: exits 77 (ctest: skipped) where none is
// present. Checks out_q8 (the output's int8 blocks) against gpu_quantize_act_q8 byte for byte; its
// --bench times only that option (attn_gpu_bench is the attention benchmark). Plain C++: it reaches
// the GPU through gpu_port.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "alap/kernels/fp16.h"
#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"
#include "tests/kernels/gpu/prefill_bound.h"

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
template <class ScoreFn, class ValueFn>
std::vector<double> reference(const attn_case& c, int capacity, ValueFn vval, float scale, ScoreFn score) {
  const int n_head = c.n_kv_head * c.group, hd = c.head_dim;
  std::vector<double> out(size_t(n_head) * hd, 0.0), s(c.n_ctx);
  for (int h = 0; h < n_head; ++h) {
    const int kv = h / c.group;
    double mx = -INFINITY;
    for (int j = 0; j < c.n_ctx; ++j) mx = std::max(mx, s[j] = scale * score(h, kv, j));
    double l = 0.0;
    for (int j = 0; j < c.n_ctx; ++j) l += (s[j] = std::exp(s[j] - mx));
    for (int j = 0; j < c.n_ctx; ++j) {
      const size_t row = size_t(kv) * capacity + j;
      for (int d = 0; d < hd; ++d) out[size_t(h) * hd + d] += s[j] / l * vval(row, d);
    }
  }
  return out;
}

template <class A, class B>
double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
  double e = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double(a[i]) - double(b[i]));
    if (!(d <= e)) e = std::isnan(d) ? HUGE_VAL : d;  // NaN (an unwritten, poisoned element) fails any limit
  }
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

  // V for k8v8: the fp16 values quantised with the same rule, per 32-block of a row.
  std::vector<int8_t> vq(v.size(), 0);
  std::vector<uint16_t> vd(size_t(n_kv) * capacity * nb, 0);
  for (size_t row = 0; row < size_t(n_kv) * capacity; ++row)
    for (int b = 0; b < nb; ++b) {
      float x[32];
      for (int i = 0; i < 32; ++i) x[i] = fp16_to_f32(v[row * hd + b * 32 + i]);
      quantize_block(x, vq.data() + row * hd + b * 32, vd.data() + row * nb + b);
    }

  // References: k8 (quantised query and K, int32 block sums), f16 (fp32 q · fp16 K), exact (fp32);
  // V fp16, or V int8 (k8v8).
  std::vector<int8_t> qq(q.size());
  std::vector<float> dq(size_t(n_head) * nb);
  for (int h = 0; h < n_head; ++h)
    for (int b = 0; b < nb; ++b) {
      uint16_t bits = 0;
      quantize_block(q.data() + size_t(h) * hd + b * 32, qq.data() + size_t(h) * hd + b * 32, &bits);
      dq[size_t(h) * nb + b] = fp16_to_f32(bits);
    }
  const auto v_f16 = [&](size_t row, int d) { return double(fp16_to_f32(v[row * hd + d])); };
  const auto v_i8 = [&](size_t row, int d) { return double(fp16_to_f32(vd[row * nb + d / 32])) * vq[row * hd + d]; };
  const auto score_k8 = [&](int h, int kv, int j) {
    const size_t row = size_t(kv) * capacity + j;
    double s = 0.0;
    for (int b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (int i = 0; i < 32; ++i) isum += int32_t(qq[size_t(h) * hd + b * 32 + i]) * kq_ref[row * hd + b * 32 + i];
      s += double(dq[size_t(h) * nb + b]) * fp16_to_f32(kd_ref[row * nb + b]) * isum;
    }
    return s;
  };
  const auto ref_k8 = reference(c, capacity, v_f16, scale, score_k8);
  const auto ref_k8v8 = reference(c, capacity, v_i8, scale, score_k8);
  const auto ref_f16 = reference(c, capacity, v_f16, scale, [&](int h, int kv, int j) {
    double s = 0.0;
    for (int d = 0; d < hd; ++d) s += double(q[size_t(h) * hd + d]) * fp16_to_f32(k_f16[(size_t(kv) * capacity + j) * hd + d]);
    return s;
  });
  const auto ref_exact = reference(c, capacity, v_f16, scale, [&](int h, int kv, int j) {
    double s = 0.0;
    for (int d = 0; d < hd; ++d) s += double(q[size_t(h) * hd + d]) * k_new[(size_t(j) * n_kv + kv) * hd + d];
    return s;
  });

  // GPU attention, three modes; the output poisoned (NaN) before each run, so an unwritten element fails.
  device_buffer<float> d_q(q);
  device_buffer<uint16_t> d_v(v), d_kf16(k_f16), d_vd(vd);
  device_buffer<int8_t> d_vq(vq);
  device_buffer<float> d_out(q.size());
  const size_t scratch_bytes = alap::gpu::attn_decode_scratch_bytes(n_head, hd);
  device_buffer<char> d_scratch(scratch_bytes);
  ALAP_GPU_CHECK(alap_gpu_memset(d_scratch.ptr, 0, scratch_bytes));
  alap::gpu::attn_decode_params p{};
  p.q = d_q.ptr;
  p.k_q = d_kq.ptr;
  p.k_d = d_kd.ptr;
  p.k_f16 = d_kf16.ptr;
  p.v = d_v.ptr;
  p.v_q = d_vq.ptr;
  p.v_d = d_vd.ptr;
  p.out = d_out.ptr;
  p.scratch = d_scratch.ptr;
  p.n_head = n_head;
  p.n_kv_head = n_kv;
  p.head_dim = hd;
  p.capacity = capacity;
  p.n_ctx = c.n_ctx;
  p.n_split = c.n_split;
  p.scale = scale;
  const auto run = [&](int (*fn)(const alap::gpu::attn_decode_params*, void*)) {
    ALAP_GPU_CHECK(alap_gpu_memset(d_out.ptr, 0xff, q.size() * sizeof(float)));
    expect(fn(&p, nullptr) == 0, alap::gpu::gpu_error_message());
    ALAP_GPU_CHECK(alap_gpu_device_synchronize());
    return d_out.download();
  };
  const std::vector<float> out_k8 = run(alap::gpu::attn_k8_decode_run);
  const std::vector<float> out_f16 = run(alap::gpu::attn_f16_decode_run);
  const std::vector<float> out_k8v8 = run(alap::gpu::attn_k8v8_decode_run);
  // A second k8 run on the same scratch: the split counters must have been left at zero.
  const std::vector<float> out_k8_again = run(alap::gpu::attn_k8_decode_run);

  // out_q8: the attention also writes out's int8 blocks for the Wo product. They must equal, byte for
  // byte, what gpu_quantize_act_q8 writes from the same out (q, d and s16; the layout's padding is
  // left alone), and out must be what the run without out_q8 wrote. Two poisons (0x5a, 0xa5): an
  // unwritten byte fails one of them.
  const int n_cols = n_head * hd;
  const size_t xq_bytes = alap::gpu::gpu_act_q8_bytes(1, n_cols);
  device_buffer<uint8_t> d_xq(xq_bytes), d_xq_ref(xq_bytes);
  const auto sections = [&](const std::vector<uint8_t>& raw) {  // q [n_cols], d [n_cols/32], s16 [n_cols/16]
    const size_t qb = (size_t(n_cols) + 15) / 16 * 16, db = (size_t(n_cols / 32) * 4 + 15) / 16 * 16;
    std::vector<uint8_t> bytes(raw.begin(), raw.begin() + n_cols);
    bytes.insert(bytes.end(), raw.begin() + qb, raw.begin() + qb + size_t(n_cols / 32) * 4);
    bytes.insert(bytes.end(), raw.begin() + qb + db, raw.begin() + qb + db + size_t(n_cols / 16) * 4);
    return bytes;
  };
  const auto reference_q8 = [&](const std::vector<float>& out) {
    device_buffer<float> d_x(out);
    ALAP_GPU_CHECK(alap_gpu_memset(d_xq_ref.ptr, 0x5a, xq_bytes));
    expect(alap::gpu::gpu_quantize_act_q8(d_x.ptr, d_xq_ref.ptr, 1, n_cols, nullptr) == 0,
           alap::gpu::gpu_error_message());
    ALAP_GPU_CHECK(alap_gpu_device_synchronize());
    return sections(d_xq_ref.download());
  };
  const std::vector<uint8_t> q8_k8 = reference_q8(out_k8), q8_f16 = reference_q8(out_f16),
                             q8_k8v8 = reference_q8(out_k8v8);
  const auto check_q8 = [&](int (*fn)(const alap::gpu::attn_decode_params*, void*), const std::vector<float>& out_plain,
                            const std::vector<uint8_t>& q8_ref, const char* name) {
    for (int poison : {0x5a, 0xa5}) {
      ALAP_GPU_CHECK(alap_gpu_memset(d_xq.ptr, poison, xq_bytes));
      p.out_q8 = d_xq.ptr;
      const std::vector<float> out = run(fn);
      p.out_q8 = nullptr;
      expect(out == out_plain, std::string(name) + " with out_q8: out differs from the run without it, " + tag);
      expect(sections(d_xq.download()) == q8_ref,
             std::string(name) + " out_q8 differs from gpu_quantize_act_q8(out), poison " + std::to_string(poison) +
                 ", " + tag);
    }
  };
  check_q8(alap::gpu::attn_k8_decode_run, out_k8, q8_k8, "k8");
  check_q8(alap::gpu::attn_f16_decode_run, out_f16, q8_f16, "f16");
  check_q8(alap::gpu::attn_k8v8_decode_run, out_k8v8, q8_k8v8, "k8v8");

  // Programmatic dependent launch right after the kernel that writes the newest row: that row is
  // zeroed, rewritten by kv_k8_store_run on a stream, and the attention launched on the same stream
  // with kAttnLaunchPdl must see it; the result is bit-identical to the plain launch's (same kernel,
  // same arithmetic; the flag only lets the launch overlap the store).
  alap_gpu_stream_t stream = nullptr;
  ALAP_GPU_CHECK(alap_gpu_stream_create(&stream));
  const auto run_pdl = [&](int mode) {
    ALAP_GPU_CHECK(alap_gpu_memset(d_out.ptr, 0xff, q.size() * sizeof(float)));
    for (int h = 0; h < n_kv; ++h) {
      const size_t row = size_t(h) * capacity + (c.n_ctx - 1);
      ALAP_GPU_CHECK(alap_gpu_memset(d_kq.ptr + row * hd, 0, size_t(hd)));
      ALAP_GPU_CHECK(alap_gpu_memset(d_kd.ptr + row * nb, 0, size_t(nb) * 2));
    }
    alap::gpu::kv_k8_store_params last{d_k_new.ptr + size_t(c.n_ctx - 1) * n_kv * hd, d_kq.ptr, d_kd.ptr, 1, n_kv, hd,
                                       capacity, c.n_ctx - 1};
    expect(alap::gpu::kv_k8_store_run(&last, stream) == 0, alap::gpu::gpu_error_message());
    ALAP_GPU_CHECK(alap_gpu_memset(d_xq.ptr, 0xa5, xq_bytes));
    p.out_q8 = d_xq.ptr;  // written after the wait too
    expect(alap::gpu::attn_decode_run_ex(&p, mode, alap::gpu::kAttnLaunchPdl, stream) == 0,
           alap::gpu::gpu_error_message());
    p.out_q8 = nullptr;
    ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
    return d_out.download();
  };
  expect(run_pdl(1) == out_k8, "k8 with PDL after the newest row's store differs from the plain launch, " + tag);
  expect(sections(d_xq.download()) == q8_k8, "k8 with PDL: out_q8 differs, " + tag);
  expect(run_pdl(0) == out_f16, "f16 with PDL differs from the plain launch, " + tag);
  expect(sections(d_xq.download()) == q8_f16, "f16 with PDL: out_q8 differs, " + tag);
  expect(run_pdl(2) == out_k8v8, "k8v8 with PDL after the newest row's store differs from the plain launch, " + tag);
  expect(sections(d_xq.download()) == q8_k8v8, "k8v8 with PDL: out_q8 differs, " + tag);

  // The position read on the device (pos_dev: one captured decode step for a range of positions).
  // The launch is given a lower bound lo of the rows, the device n_ctx − 1: the kernel cuts the
  // splits for lo and serves up to attn_decode_ctx_limit, so the output is the plain launch's bit
  // for bit, launched plainly and with PDL, for lo = n_ctx and for the smallest lo (halving) whose
  // range still holds n_ctx (its first tiles then stop well before the device's rows). A position
  // past the capacity attends every row it may, one before 0 the first: no fault (the sanitizer
  // runs check it), a finite output.
  device_buffer<int32_t> d_pos(std::vector<int32_t>{c.n_ctx - 1});
  const auto run_dev = [&](int mode, unsigned flags, int lo) {
    ALAP_GPU_CHECK(alap_gpu_memset(d_out.ptr, 0xff, q.size() * sizeof(float)));
    alap::gpu::attn_decode_params pd = p;
    pd.n_ctx = lo;
    pd.pos_dev = d_pos.ptr;
    expect(alap::gpu::attn_decode_run_ex(&pd, mode, flags, stream) == 0, alap::gpu::gpu_error_message());
    ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
    return d_out.download();
  };
  const auto limit_at = [&](int lo, int mode) {
    alap::gpu::attn_decode_params pd = p;
    pd.n_ctx = lo;
    pd.pos_dev = d_pos.ptr;
    return alap::gpu::attn_decode_ctx_limit(&pd, mode);
  };
  const std::vector<float>* plain_out[3] = {&out_f16, &out_k8, &out_k8v8};
  const char* mode_name[3] = {"f16", "k8", "k8v8"};
  int lo_k8 = c.n_ctx;
  for (int mode = 0; mode < 3; ++mode) {
    int lo_min = c.n_ctx;
    while (lo_min > 1 && limit_at(lo_min / 2, mode) >= c.n_ctx) lo_min /= 2;
    if (mode == 1) lo_k8 = lo_min;
    const int hi = limit_at(c.n_ctx, mode);
    expect(hi >= c.n_ctx && hi <= capacity,
           std::string(mode_name[mode]) + ": attn_decode_ctx_limit out of range, " + tag);
    for (int lo : {c.n_ctx, lo_min}) {
      for (unsigned flags : {0u, alap::gpu::kAttnLaunchPdl}) {
        expect(run_dev(mode, flags, lo) == *plain_out[mode],
               std::string(mode_name[mode]) + " at a device position differs from the plain launch (lo " +
                   std::to_string(lo) + (flags != 0 ? ", PDL), " : "), ") + tag);
      }
    }
  }
  for (int bad : {capacity + 100, -7}) {
    ALAP_GPU_CHECK(alap_gpu_memcpy(d_pos.ptr, &bad, sizeof bad, alap_gpu_memcpy_h2d));
    const std::vector<float> out = run_dev(1, 0, lo_k8);
    expect(std::all_of(out.begin(), out.end(), [](float x) { return std::isfinite(x); }),
           "k8 at a device position out of range: not finite, " + tag);
  }
  ALAP_GPU_CHECK(alap_gpu_stream_destroy(stream));

  const double e_k8 = max_abs_diff(out_k8, ref_k8);
  const double e_f16 = max_abs_diff(out_f16, ref_f16);
  const double e_k8v8 = max_abs_diff(out_k8v8, ref_k8v8);
  const double e_k8_exact = max_abs_diff(out_k8, ref_exact);
  const double e_ref_exact = max_abs_diff(ref_k8, ref_exact);
  std::printf("%-40s k8 %.2e (vs exact %.2e, ref k8 vs exact %.2e)  f16 %.2e  k8v8 %.2e\n", tag.c_str(), e_k8,
              e_k8_exact, e_ref_exact, e_f16, e_k8v8);
  expect(e_k8 < 1e-4, "k8 output differs from the k8 reference, " + tag);
  expect(e_f16 < 1e-4, "f16 output differs from the f16 reference, " + tag);
  expect(e_k8v8 < 1e-4, "k8v8 output differs from the k8v8 reference, " + tag);
  expect(out_k8_again == out_k8, "a second k8 run on the same scratch differs, " + tag);
  // FlashAttention's rule: the fast kernel's error at most twice a same-precision reference's.
  expect(e_k8_exact <= 2.0 * e_ref_exact + 1e-5, "k8 error vs exact exceeds twice the reference's, " + tag);
}

// Prefill: n_q tokens at positions pos0.. over a cache of pos0 + n_q rows, causal, K packed, V fp16
// or int8, against a double-precision reference of the same quantised arithmetic (on CUDA at
// head_dim 64/128 through the matrix-unit kernel unless ALAP_GPU_PREFILL_MMA=0).
// extreme_v: V codes -128 and 127 every few bytes (the ends of the int8 -> fp16 staging of k8v8).
// v_at_fp16_end: every int8 V block's scale 516 = fp16(65504 / 127), a block holding fp16's largest
// value: the k8v8 output must stay finite (q·d_v staged in fp16 would pass 65504) and within 1% of
// the weighted |v| (the staging's scale is held to 511.75 there, 0.82% under).
void run_prefill_case(int hd, int n_kv, int group, int pos0, int n_q, std::mt19937& rng, bool extreme_v = false,
                      bool v_at_fp16_end = false) {
  const int n_head = n_kv * group, nb = hd / 32, n_rows = pos0 + n_q, capacity = n_rows + 3;
  const float scale = 1.0f / std::sqrt(float(hd));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<int8_t> kq(size_t(n_kv) * capacity * hd, 0), vq(kq.size(), 0);
  std::vector<uint16_t> kd(size_t(n_kv) * capacity * nb, 0), vd(kd.size(), 0), v(kq.size(), 0);
  for (size_t row = 0; row < size_t(n_kv) * capacity; ++row)
    for (int b = 0; b < nb; ++b) {
      float xk[32], xv[32];
      const float rs = 0.1f + 3.0f * std::fabs(normal(rng));
      for (int i = 0; i < 32; ++i) {
        xk[i] = rs * normal(rng);
        v[row * hd + b * 32 + i] = f32_to_fp16(normal(rng));
        xv[i] = fp16_to_f32(v[row * hd + b * 32 + i]);
      }
      quantize_block(xk, kq.data() + row * hd + b * 32, kd.data() + row * nb + b);
      quantize_block(xv, vq.data() + row * hd + b * 32, vd.data() + row * nb + b);
    }
  if (extreme_v)
    for (size_t i = 0; i < vq.size(); ++i) vq[i] = i % 5 == 0 ? int8_t(-128) : i % 7 == 0 ? int8_t(127) : vq[i];
  if (v_at_fp16_end) std::fill(vd.begin(), vd.end(), uint16_t(0x6008));
  std::vector<float> q(size_t(n_q) * n_head * hd);
  for (float& x : q) x = 1.5f * normal(rng);
  std::vector<int8_t> qq(q.size());
  std::vector<float> dq(size_t(n_q) * n_head * nb);
  for (size_t r = 0; r < size_t(n_q) * n_head; ++r)
    for (int b = 0; b < nb; ++b) {
      uint16_t bits = 0;
      quantize_block(q.data() + r * hd + b * 32, qq.data() + r * hd + b * 32, &bits);
      dq[r * nb + b] = fp16_to_f32(bits);
    }
  // ref[t][h][d] for V fp16 (packed = false) or int8, and beside it Σ p·|v| / Σ p of each element
  // (its error bound where P is rounded to fp16: prefill_bound.h).
  struct reference {
    std::vector<double> out, abs_v;
  };
  const auto reference_prefill = [&](bool packed) {
    std::vector<double> out(q.size(), 0.0), abs_v(q.size(), 0.0), s(n_rows);
    for (int t = 0; t < n_q; ++t)
      for (int h = 0; h < n_head; ++h) {
        const int kv = h / group, n_see = pos0 + t + 1;
        const size_t qr = size_t(t) * n_head + h;
        double mx = -INFINITY;
        for (int j = 0; j < n_see; ++j) {
          const size_t row = size_t(kv) * capacity + j;
          double sc = 0.0;
          for (int b = 0; b < nb; ++b) {
            int32_t isum = 0;
            for (int i = 0; i < 32; ++i) isum += int32_t(qq[qr * hd + b * 32 + i]) * kq[row * hd + b * 32 + i];
            sc += double(dq[qr * nb + b]) * fp16_to_f32(kd[row * nb + b]) * isum;
          }
          mx = std::max(mx, s[j] = scale * sc);
        }
        double l = 0.0;
        for (int j = 0; j < n_see; ++j) l += (s[j] = std::exp(s[j] - mx));
        for (int j = 0; j < n_see; ++j) {
          const size_t row = size_t(kv) * capacity + j;
          for (int d = 0; d < hd; ++d) {
            const double vv = packed ? double(fp16_to_f32(vd[row * nb + d / 32])) * vq[row * hd + d]
                                     : double(fp16_to_f32(v[row * hd + d]));
            out[qr * hd + d] += s[j] / l * vv;
            abs_v[qr * hd + d] += s[j] / l * std::fabs(vv);
          }
        }
      }
    return reference{std::move(out), std::move(abs_v)};
  };
  const bool fp16_p = alap::test::prefill_on_matrix_units(hd);
  device_buffer<float> d_q(q), d_out(q.size());
  device_buffer<int8_t> d_kq(kq), d_vq(vq);
  device_buffer<uint16_t> d_kd(kd), d_vd(vd), d_v(v);
  alap::gpu::attn_prefill_params p{};
  p.q = d_q.ptr;
  p.k_q = d_kq.ptr;
  p.k_d = d_kd.ptr;
  p.out = d_out.ptr;
  p.n_q = n_q;
  p.n_head = n_head;
  p.n_kv_head = n_kv;
  p.head_dim = hd;
  p.capacity = capacity;
  p.pos0 = pos0;
  p.scale = scale;
  const std::string tag = "prefill hd=" + std::to_string(hd) + " kv=" + std::to_string(n_kv) + " G=" +
                          std::to_string(group) + " pos0=" + std::to_string(pos0) + " n_q=" + std::to_string(n_q) +
                          (extreme_v ? " v=±end" : "") + (v_at_fp16_end ? " d_v=516" : "");
  for (int packed = 0; packed < 2; ++packed) {
    p.v = packed ? nullptr : d_v.ptr;
    p.v_q = packed ? d_vq.ptr : nullptr;
    p.v_d = packed ? d_vd.ptr : nullptr;
    ALAP_GPU_CHECK(alap_gpu_memset(d_out.ptr, 0xff, q.size() * sizeof(float)));
    expect(alap::gpu::attn_k8_prefill_run(&p, nullptr) == 0, alap::gpu::gpu_error_message());
    ALAP_GPU_CHECK(alap_gpu_device_synchronize());
    const std::vector<float> got = d_out.download();
    const reference ref = reference_prefill(packed != 0);
    const bool fp16_v = packed != 0 && alap::test::prefill_v8_rounded_to_fp16(hd);
    // Largest error, and largest error over its element's bound (a NaN fails both).
    const double e = max_abs_diff(got, ref.out);
    double over = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double bound = alap::test::prefill_bound(fp16_p, ref.abs_v[i], fp16_v) +
                           (packed && v_at_fp16_end ? 1e-2 * ref.abs_v[i] : 0.0);
      const double r = std::fabs(double(got[i]) - ref.out[i]) / bound;
      if (!(r <= over)) over = std::isnan(r) ? HUGE_VAL : r;
    }
    std::printf("%-40s %s %.2e (of its bound %.2f)\n", tag.c_str(), packed ? "k8v8" : "k8  ", e, over);
    expect(over < 1.0, std::string(packed ? "k8v8" : "k8") + " prefill differs from the reference, " + tag);
  }
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
  p.n_ctx = 4;
  alignas(16) static float dummy[64];  // never read: the call is refused before any launch
  p.q = dummy;
  p.out = dummy;
  p.k_q = reinterpret_cast<const int8_t*>(dummy);
  p.k_d = reinterpret_cast<const uint16_t*>(dummy);
  p.scratch = dummy;
  expect(alap::gpu::attn_k8v8_decode_run(&p, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "v_q") != nullptr,
         "k8v8 without v_q must be refused with a message naming v_q");
  p.v = reinterpret_cast<const uint16_t*>(dummy);
  p.out_q8 = reinterpret_cast<char*>(dummy) + 4;
  expect(alap::gpu::attn_k8_decode_run(&p, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "out_q8") != nullptr,
         "an out_q8 off a 16-byte boundary must be refused with a message naming out_q8");
  p.out_q8 = nullptr;
  expect(alap::gpu::attn_decode_run_ex(&p, 3, 0u, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "mode") != nullptr,
         "attn_decode_run_ex must refuse mode 3");
  expect(alap::gpu::attn_decode_run_ex(&p, 1, 0x80u, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "flag") != nullptr,
         "attn_decode_run_ex must refuse unknown flag bits");
  alap::gpu::attn_prefill_params pp{};
  pp.n_q = 4;
  pp.n_head = 4;
  pp.n_kv_head = 2;
  pp.head_dim = 64;
  pp.capacity = 10;
  pp.pos0 = 7;
  expect(alap::gpu::attn_k8_prefill_run(&pp, nullptr) != 0 &&
             std::strstr(alap::gpu::gpu_error_message(), "capacity") != nullptr,
         "a prefill past capacity must be refused");
}

// --bench: what out_q8 costs. Decode attention in Llama-3-8B geometry (32 query / 8 KV heads of
// 128) at 4k and 32k for each mode, µs per call from replays of a captured graph (median of 30),
// cache copies rotated past the L2 (240 MB read per replay at least): the call without out_q8, with
// it, and without it followed by gpu_quantize_act_q8 (the launch out_q8 replaces in a decode step).
void bench_out_q8() {
  constexpr int H = 32, Hk = 8, D = 128, n_cols = H * D;
  alap_gpu_stream_t stream = nullptr;
  ALAP_GPU_CHECK(alap_gpu_stream_create(&stream));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hq(n_cols);
  for (float& x : hq) x = normal(rng);
  device_buffer<float> q(hq), out(n_cols);
  device_buffer<uint8_t> xq(alap::gpu::gpu_act_q8_bytes(1, n_cols));
  const size_t scratch_bytes = alap::gpu::attn_decode_scratch_bytes(H, D);
  device_buffer<char> scratch(scratch_bytes);
  ALAP_GPU_CHECK(alap_gpu_memset(scratch.ptr, 0, scratch_bytes));
  alap_gpu_event_t t0, t1;
  ALAP_GPU_CHECK(alap_gpu_event_create(&t0));
  ALAP_GPU_CHECK(alap_gpu_event_create(&t1));
  const auto time_us = [&](int per, auto&& call) {  // µs per call, median of 30 graph replays
    alap_gpu_graph_t g = nullptr;
    alap_gpu_graph_exec_t exec = nullptr;
    ALAP_GPU_CHECK(alap_gpu_stream_begin_capture(stream));
    for (int i = 0; i < per; ++i) call(i);
    ALAP_GPU_CHECK(alap_gpu_stream_end_capture(stream, &g));
    ALAP_GPU_CHECK(alap_gpu_graph_instantiate(&exec, g));
    for (int w = 0; w < 3; ++w) ALAP_GPU_CHECK(alap_gpu_graph_launch(exec, stream));
    std::vector<double> t;
    for (int r = 0; r < 30; ++r) {
      ALAP_GPU_CHECK(alap_gpu_event_record(t0, stream));
      ALAP_GPU_CHECK(alap_gpu_graph_launch(exec, stream));
      ALAP_GPU_CHECK(alap_gpu_event_record(t1, stream));
      ALAP_GPU_CHECK(alap_gpu_event_synchronize(t1));
      float ms = 0.0f;
      ALAP_GPU_CHECK(alap_gpu_event_elapsed_ms(&ms, t0, t1));
      t.push_back(1000.0 * ms / per);
    }
    ALAP_GPU_CHECK(alap_gpu_graph_exec_destroy(exec));
    ALAP_GPU_CHECK(alap_gpu_graph_destroy(g));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  std::printf("out_q8 bench (H %d, KV %d, head_dim %d; graph, us per call): mode ctx | plain | out_q8 | "
              "plain + quantize_act_q8 | out_q8 - plain\n", H, Hk, D);
  for (int ctx : {4096, 32768}) {
    for (int mode = 0; mode < 3; ++mode) {
      const size_t k_bytes = size_t(Hk) * ctx * D * (mode == 0 ? 2 : 1), v_bytes = size_t(Hk) * ctx * D * (mode == 2 ? 1 : 2);
      const size_t s_bytes = size_t(Hk) * ctx * (D / 32) * 2;  // fp16 scales of K or V
      const size_t per_copy = k_bytes + v_bytes + (mode != 0 ? s_bytes : 0) + (mode == 2 ? s_bytes : 0);
      const int copies = int((size_t(240) * 1000 * 1000 + per_copy - 1) / per_copy);
      // Finite, quantisation-sized contents (the time does not depend on them): fp16 0x2020 ≈ 0.0083,
      // 0x3030 ≈ 0.13; int8 5.
      std::vector<char*> bufs;
      std::vector<alap::gpu::attn_decode_params> ps(copies);
      const auto alloc = [&](size_t bytes, int byte) {
        char* ptr = nullptr;
        ALAP_GPU_CHECK(alap_gpu_malloc(&ptr, bytes));
        ALAP_GPU_CHECK(alap_gpu_memset(ptr, byte, bytes));
        bufs.push_back(ptr);
        return ptr;
      };
      for (alap::gpu::attn_decode_params& p : ps) {
        p = {};
        p.q = q.ptr;
        p.out = out.ptr;
        p.scratch = scratch.ptr;
        p.n_head = H;
        p.n_kv_head = Hk;
        p.head_dim = D;
        p.capacity = ctx;
        p.n_ctx = ctx;
        p.scale = 1.0f / std::sqrt(float(D));
        if (mode == 0) {
          p.k_f16 = reinterpret_cast<const uint16_t*>(alloc(k_bytes, 0x20));
        } else {
          p.k_q = reinterpret_cast<const int8_t*>(alloc(k_bytes, 5));
          p.k_d = reinterpret_cast<const uint16_t*>(alloc(s_bytes, 0x20));
        }
        if (mode == 2) {
          p.v_q = reinterpret_cast<const int8_t*>(alloc(v_bytes, 5));
          p.v_d = reinterpret_cast<const uint16_t*>(alloc(s_bytes, 0x20));
        } else {
          p.v = reinterpret_cast<const uint16_t*>(alloc(v_bytes, 0x30));
        }
      }
      const int per = std::max(copies, 20);
      const auto attend = [&](int i, bool q8) {
        alap::gpu::attn_decode_params p = ps[size_t(i) % ps.size()];
        p.out_q8 = q8 ? xq.ptr : nullptr;
        if (alap::gpu::attn_decode_run_ex(&p, mode, 0u, stream) != 0) throw std::runtime_error(alap::gpu::gpu_error_message());
      };
      const double plain = time_us(per, [&](int i) { attend(i, false); });
      const double fused = time_us(per, [&](int i) { attend(i, true); });
      const double pair = time_us(per, [&](int i) {
        attend(i, false);
        if (alap::gpu::gpu_quantize_act_q8(out.ptr, xq.ptr, 1, n_cols, stream) != 0)
          throw std::runtime_error(alap::gpu::gpu_error_message());
      });
      std::printf("out_q8 bench %-4s %6d | %7.2f | %7.2f | %7.2f | %+6.2f\n", mode == 0 ? "f16" : mode == 1 ? "k8" : "k8v8",
                  ctx, plain, fused, pair, fused - plain);
      ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
      for (char* b : bufs) ALAP_GPU_CHECK(alap_gpu_free(b));
    }
  }
  ALAP_GPU_CHECK(alap_gpu_event_destroy(t0));
  ALAP_GPU_CHECK(alap_gpu_event_destroy(t1));
  ALAP_GPU_CHECK(alap_gpu_stream_destroy(stream));
}

}  // namespace

// --small: a few small shapes only (for compute-sanitizer memcheck/racecheck, which run slowly).
// --prefill: the prefill cases only.
// --bench: bench_out_q8 only.
int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const bool prefill_only = argc > 1 && std::strcmp(argv[1], "--prefill") == 0;
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
    if (argc > 1 && std::strcmp(argv[1], "--bench") == 0) {
      bench_out_q8();
      return 0;
    }
    check_bad_input();
    std::mt19937 rng(20240611);
    std::vector<attn_case> cases;
    if (small) {
      for (const attn_case& c : {attn_case{64, 2, 4, 200, 0}, attn_case{128, 1, 12, 131, 3}, attn_case{256, 1, 2, 70, 1},
                                 attn_case{128, 8, 4, 2048, 16}, attn_case{128, 8, 4, 2100, 0},
                                 attn_case{128, 8, 4, 2047, 16}})
        run_case(c, rng);
      run_prefill_case(128, 1, 4, 5, 20, rng);
      run_prefill_case(64, 1, 2, 0, 9, rng);    // head_dim 64: 8 KV groups a block (CUDA), 7 of them with no tile
      run_prefill_case(128, 2, 4, 300, 64, rng);  // 2 KV groups over 12 tiles, merged
      run_prefill_case(256, 1, 2, 40, 7, rng, true);  // head_dim 256 (8 dims a lane), V codes -128 / 127
      run_prefill_case(64, 2, 4, 90, 24, rng, true);  // CUDA: the matrix-unit kernel, V codes -128 / 127
      run_prefill_case(128, 1, 4, 40, 16, rng, false, true);  // V scales at fp16's end: finite
      std::printf("%s: %d failure(s)\n", g_failures == 0 ? "PASS" : "FAIL", g_failures);
      return g_failures == 0 ? 0 : 1;
    }
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
    cases.push_back({128, 2, 12, 1500, 0});  // a group cut into slices of 8 and 4
    cases.push_back({64, 1, 16, 20000, 0});  // long context: over 64 splits
    // The split rule (attn_splits.h attn_plan_splits): Qwen2.5-0.5B geometry at 16k, where the merge caps the
    // splits at 32 of 512 rows (a device position from a lower bound then crosses a split length),
    // and Qwen2.5-1.5B at 33k, where 192 KB of rows a split allow 64 splits again.
    cases.push_back({64, 2, 7, 16001, 0});
    cases.push_back({128, 2, 6, 33001, 0});
    // Llama-3.2-1B geometry (8 KV heads of 64): one block an SM at 4k, two past ~8k rows.
    cases.push_back({64, 8, 4, 3841, 0});
    cases.push_back({64, 8, 4, 9001, 0});
    // Llama-3-8B geometry (8 KV heads, G 4): 16 and 12 splits (clusters of 16 and 12 blocks where the
    // cluster merge is built), 7 and 2.
    cases.push_back({128, 8, 4, 5000, 16});
    cases.push_back({128, 8, 4, 3000, 0});
    cases.push_back({128, 8, 4, 1900, 7});
    cases.push_back({128, 8, 4, 129, 0});
    // capacity = n_ctx + 5: odd n_ctx gives an even capacity, so every KV head's scale rows start on a
    // 16-byte boundary (head_dim 64: capacity a multiple of 4), the layout round 8's 16-byte scale
    // copies needed (measured slower, not kept).
    cases.push_back({128, 8, 4, 4999, 16});
    cases.push_back({128, 8, 4, 3001, 0});
    cases.push_back({64, 2, 4, 4091, 0});
    // One block over 32k rows (4096 per warp accumulator): the longest accumulation of one warp
    // (round 7's V widened as 1152 + v failed here).
    cases.push_back({128, 1, 4, 32768, 1});
    if (!prefill_only)
      for (const attn_case& c : cases) run_case(c, rng);
    for (int hd : {64, 128, 256})
      for (int group : {1, 4, 7}) run_prefill_case(hd, 2, group, 0, 45, rng);
    run_prefill_case(128, 2, 4, 100, 33, rng);   // a chunk after cached rows
    run_prefill_case(64, 1, 2, 1000, 17, rng);
    run_prefill_case(96, 2, 3, 7, 1, rng);       // one token: the decode case through prefill
    run_prefill_case(128, 2, 4, 200, 40, rng, false, true);  // V scales at fp16's end: finite
    // V codes at the int8 ends (-128, 127) through k8v8's fp16 staging, every head_dim bucket.
    for (int hd : {32, 96, 256}) run_prefill_case(hd, 1, 3, 61, 23, rng, true);
    // A 128-token chunk (Qwen2.5 and Llama-3 geometry) with the block's KV groups (4 and 2) and with
    // one group (ALAP_GPU_PREFILL_ATTN=1, the kernel before the groups).
    for (const char* one : {"0", "1"}) {
      setenv("ALAP_GPU_PREFILL_ATTN", one, 1);
      run_prefill_case(64, 2, 7, 500, 128, rng);
      run_prefill_case(128, 2, 4, 1000, 128, rng);
    }
    unsetenv("ALAP_GPU_PREFILL_ATTN");
    // The matrix-unit prefill (CUDA, head_dim 64/128) with each row count a block forced (16, 32, 64
    // rows: 1, 2, 4 warps, ALAP_GPU_PREFILL_MMA) and the scalar kernel (0) on the same shapes: G 7
    // (rows of a block spanning tokens), MHA, a chunk past many tiles with every KV group working, an
    // odd token count, one token. These grids leave multiprocessors a block at most (the wide KV-group
    // variants); the last two cases (8 KV heads, 1050 rows each) have more blocks than multiprocessors.
    for (const char* wm : {"0", "1", "2", "4"}) {
      setenv("ALAP_GPU_PREFILL_MMA", wm, 1);
      std::printf("ALAP_GPU_PREFILL_MMA=%s\n", wm);
      run_prefill_case(64, 2, 7, 300, 50, rng);
      run_prefill_case(128, 2, 4, 700, 37, rng);
      run_prefill_case(128, 1, 1, 0, 70, rng);
      run_prefill_case(64, 4, 4, 1500, 128, rng);
      run_prefill_case(64, 1, 3, 33, 1, rng);
      run_prefill_case(64, 8, 7, 40, 150, rng);
      run_prefill_case(128, 8, 7, 40, 150, rng);
    }
    unsetenv("ALAP_GPU_PREFILL_MMA");
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s: %d failure(s)\n", g_failures == 0 ? "PASS" : "FAIL", g_failures);
  return g_failures == 0 ? 0 : 1;
}
