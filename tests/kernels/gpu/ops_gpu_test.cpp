// Run-time check of the GPU library's ops.h against the CPU oracle (kernels/cpu: dequantize_row,
// quantize_activations, quantize_row): the activation quantiser byte for byte, gpu_matmul for all 15
// weight types on odd shapes (decode and prefill, beta 0 and 1; quantised prefill through each of its
// kernels, ALAP_GPU_PREFILL=dot4/mma128/mma64/mma32, bounded and byte for byte where the arithmetic
// is the same, run_matmul_case), RMSNorm, adds, SwiGLU, RoPE (both
// layouts, freq factors, freq_scale), get_rows (and the IQ4 code table on hand-built rows), argmax
// (ties), the fp16 KV writer, f16 prefill
// attention, the fused norm/SwiGLU + quantiser calls against the pairs they replace (byte for
// byte), graph capture/update/replay, the best logits for the sampler (gpu_logits_top, against a
// stable sort), and the device/memory error paths. Output buffers are
// NaN-poisoned first. Needs a GPU: exits 77 (ctest: skipped) where none is present. --small: few
// shapes (compute-sanitizer). --fused: only the fused calls and graphs. ALAP_TEST_TYPES (type names,
// e.g. "IQ4_NL,IQ4_XS"): the weight products and get_rows of those types only (a quick run).
// --bench: decode GB/s of every type at Llama-3-8B sizes (4096 × 4096, 14336 × 4096, 4096 × 14336)
// against copy bandwidth, prefill rate (512 tokens; quantised types also per prefill kernel, and as
// % of the H200's int8 tensor peak); --bench-decode: the quantised types' decode only (ALAP_BENCH_TYPES,
// ALAP_BENCH_ROWS: fewer of them); --bench-prefill: the prefill kernels at the engine's products and
// chunks (bench_prefill); --bench-top: gpu_logits_top's device time; --top: only its check, few
// shapes; --bench-graph: a graph of small kernels queued against launched on an idle stream.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"
#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"
#include "tests/kernels/gpu/prefill_bound.h"
#include "tests/support/scoped_env.h"

namespace {

namespace g = alap::gpu;
namespace k = alap::kernels;
using k::DType;
using alap::test::ScopedEnv;

int g_failures = 0;
int g_checks = 0;

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL: %s\n", what.c_str());
  }
}

void must(int rc, const char* what) {
  if (rc != 0) {
    std::printf("FATAL: %s: %s\n", what, g::gpu_error_message());
    std::exit(1);
  }
}

// A device buffer through the library's own memory calls.
struct dbuf {
  void* p = nullptr;
  size_t bytes = 0;
  explicit dbuf(size_t n) : bytes(n) { must(g::gpu_alloc(&p, std::max<size_t>(n, 16)), "gpu_alloc"); }
  template <class T>
  explicit dbuf(const std::vector<T>& h) : dbuf(h.size() * sizeof(T)) {
    must(g::gpu_copy_to_device(p, h.data(), bytes, nullptr), "copy to device");
  }
  ~dbuf() { (void)g::gpu_release(p); }
  dbuf(const dbuf&) = delete;
  dbuf& operator=(const dbuf&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
  template <class T>
  std::vector<T> get() const {
    std::vector<T> h(bytes / sizeof(T));
    must(g::gpu_copy_to_host(h.data(), p, bytes, nullptr), "copy to host");
    must(g::gpu_stream_sync(nullptr), "sync");
    return h;
  }
  void poison() {  // NaN in every float
    std::vector<uint8_t> h(bytes, 0xFF);
    must(g::gpu_copy_to_device(p, h.data(), bytes, nullptr), "poison");
  }
};

std::vector<float> randn(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = scale * nd(rng);
  return v;
}

const char* tname(DType t) { return k::dtype_info(static_cast<uint32_t>(t))->name; }
size_t row_bytes(DType t, int n_cols) { return k::dtype_row_bytes(*k::dtype_info(static_cast<uint32_t>(t)), n_cols); }

// Byte offsets of the fp16 scale fields in a block of t (FORMATS.md §2).
std::vector<int> f16_fields(DType t) {
  switch (t) {
    case DType::q4_1: case DType::q5_1: case DType::q4_k: case DType::q5_k: return {0, 2};
    case DType::q2_k: return {80, 82};
    case DType::q3_k: return {108};
    case DType::q6_k: return {208};
    default: return {0};
  }
}

// Random weights, stored in type t; returns the bytes. Even rows: random floats (per-row scale
// 0.05..3) through the reference quantiser. Odd rows of block types: random bytes (every bit
// pattern of quants, scales and mins) with finite fp16 fields of magnitude 2^-7..2^-5.
std::vector<uint8_t> make_weights(DType t, int n_rows, int n_cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> rs(0.05f, 3.0f);
  const size_t rb = row_bytes(t, n_cols);
  const auto* info = k::dtype_info(static_cast<uint32_t>(t));
  std::vector<uint8_t> w(rb * n_rows);
  for (int r = 0; r < n_rows; ++r) {
    uint8_t* dst = w.data() + rb * r;
    if (r % 2 == 1 && info->block_elems > 1) {
      for (size_t i = 0; i < rb; ++i) dst[i] = static_cast<uint8_t>(rng());
      for (size_t o = 0; o < rb; o += info->block_bytes)
        for (int f : f16_fields(t)) {
          dst[o + f] = static_cast<uint8_t>(rng());
          dst[o + f + 1] = static_cast<uint8_t>(0x20 + rng() % 12);  // exponent 8..10: 2^-7..2^-5
        }
    } else {
      const std::vector<float> row = randn(n_cols, rng, rs(rng));
      k::quantize_row(t, row.data(), dst, n_cols);
    }
  }
  return w;
}

bool is_plain(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// Whether t is in ALAP_TEST_TYPES (a comma-separated list of type names), or that is unset.
bool type_selected(DType t) {
  const char* only = std::getenv("ALAP_TEST_TYPES");
  if (only == nullptr) return true;
  std::string list(","), key(",");  // appended, not "," + ...: GCC 12's -Wrestrict misfires on that
  list.append(only).append(",");
  key.append(tname(t)).append(",");
  return list.find(key) != std::string::npos;
}

// The device layout of gpu_quantize_act_q8 (kernels/gpu/matmul_kernel.h): q, d, s16, each 16-aligned.
struct act_host {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> s16;
};
act_host split_act(const std::vector<uint8_t>& raw, int n_tok, int n_cols) {
  const size_t qb = (size_t(n_tok) * n_cols + 15) / 16 * 16;
  const size_t db = (size_t(n_tok) * (n_cols / 32) * 4 + 15) / 16 * 16;
  act_host a;
  a.q.resize(size_t(n_tok) * n_cols);
  a.d.resize(size_t(n_tok) * (n_cols / 32));
  a.s16.resize(size_t(n_tok) * (n_cols / 16));
  std::memcpy(a.q.data(), raw.data(), a.q.size());
  std::memcpy(a.d.data(), raw.data() + qb, a.d.size() * 4);
  std::memcpy(a.s16.data(), raw.data() + qb + db, a.s16.size() * 4);
  return a;
}

// ---- device and errors ---------------------------------------------------------------------

void test_errors(int n_devices) {
  void* p = reinterpret_cast<void*>(0x1);
  const int rc = g::gpu_alloc(&p, size_t(1) << 60);
  const std::string msg = g::gpu_error_message();
  expect(rc != 0 && p == nullptr, "gpu_alloc(1 EiB) fails and leaves null");
  expect(msg.find("gpu_alloc") != std::string::npos && msg.find("cannot allocate") != std::string::npos,
         "out-of-memory message names the call: '" + msg + "'");
  expect(g::gpu_device_open(n_devices + 3, nullptr) != 0, "opening a missing device fails");
  expect(std::string(g::gpu_error_message()).find("does not exist") != std::string::npos,
         "missing-device message: " + std::string(g::gpu_error_message()));
  expect(g::gpu_matmul_supported(12) == 1 && g::gpu_matmul_supported(30) == 1 && g::gpu_matmul_supported(16) == 0 &&
             g::gpu_matmul_supported(15) == 0,
         "gpu_matmul_supported");
  expect(g::gpu_matmul_supported(20) == 1 && g::gpu_matmul_supported(23) == 1 && g::gpu_matmul_supported(21) == 0 &&
             g::gpu_matmul_supported(22) == 0,
         "gpu_matmul_supported: IQ4_NL and IQ4_XS, not IQ3_S / IQ2_S");
  expect(g::gpu_matmul(16, p, 4, 256, nullptr, nullptr, 1, nullptr, 0.0f, nullptr) != 0, "unsupported type refused");
  expect(g::gpu_quantize_act_q8(nullptr, nullptr, 1, 33, nullptr) != 0, "n_cols 33 refused");
  expect(g::gpu_act_q8_bytes(2, 33) == 0, "act bytes of a bad width is 0");
  expect(g::gpu_release(nullptr) == 0, "release(null)");
  uint64_t f = 0, t = 0;
  expect(g::gpu_mem_info(&f, &t) == 0 && f > 0 && t >= f, "gpu_mem_info");
}

// ---- activations and products ----------------------------------------------------------------

void test_quantize_act(std::mt19937& rng) {
  const int n_tok = 17, n_cols = 288;
  std::vector<float> x = randn(size_t(n_tok) * n_cols, rng, 2.0f);
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // one all-zero block: d = 0, q = 0
  x[5] = 127.0f * 0.5f;                             // exact ties of x/d exercise round-to-even
  dbuf dx(x), dq(g::gpu_act_q8_bytes(n_tok, n_cols));
  dq.poison();
  must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, n_tok, n_cols, nullptr), "quantize");
  const act_host a = split_act(dq.get<uint8_t>(), n_tok, n_cols);
  std::vector<int8_t> q(x.size());
  std::vector<float> d(x.size() / 32);
  std::vector<int32_t> s(x.size() / 32), s4(x.size() / 4);
  k::quantize_activations(x.data(), n_tok, n_cols, q.data(), d.data(), s.data(), s4.data());
  bool same_q = a.q == q, same_d = std::memcmp(a.d.data(), d.data(), d.size() * 4) == 0, same_s = true;
  for (size_t b = 0; b < s.size(); ++b) same_s = same_s && a.s16[2 * b] + a.s16[2 * b + 1] == s[b] &&
                                                  a.s16[2 * b] == s4[8 * b] + s4[8 * b + 1] + s4[8 * b + 2] + s4[8 * b + 3];
  expect(same_q && same_d && same_s, "gpu_quantize_act_q8 equals quantize_activations (q, d, sums) byte for byte");
}

struct mm_case {
  int n_rows, n_cols, n_tok;
};

double g_mm_err_q = 0.0, g_mm_err_plain = 0.0, g_mm_err_cpu = 0.0, g_mm_err_mma = 0.0, g_mm_err_dot4 = 0.0;
double g_mm_tol_use = 0.0;  // the largest error / bound of the quantised checks
int g_mm_prefill_cases = 0;  // prefill cases run through every prefill kernel

// Bytes [from, to) of each block of t that hold quants (zeroed, they leave W = b: the min term of
// a type with one; FORMATS.md §2), or {0, 0} for types whose offset is a multiple of the scale.
std::pair<int, int> quant_bytes_of_min_type(DType t) {
  switch (t) {
    case DType::q4_1: return {4, 20};
    case DType::q5_1: return {4, 24};
    case DType::q4_k: return {16, 144};
    case DType::q5_k: return {16, 176};
    case DType::q2_k: return {16, 80};
    default: return {0, 0};
  }
}

// The bound of a quantised product's error relative to M' = Σ_b d_b Σ_i (|W_i − B_i| + |B_i|)·|q_i|
// (B the min term of W, 0 for types without one): the int dots are exact, every kernel's fp32
// steps round each block term at most 3 times (the mma kernel: a·I, then fma with xd, [xd·Σq and
// its fma]; Q2_K a third fma; dot4: b·s16, fma(a, dot, ·), fma with xd, per 16-half) and add the
// ≤ 3·n_blk terms (and the beta term) in one fp32 chain, the CPU's W rounds once:
// first-order |error| ≤ (3·n_blk + 5)·2^-24·M' (2.5e-5 at 4352 columns, 1.1e-6 at 96).
double quant_bound(int n_cols) { return (3.0 * (n_cols / 32) + 5.0) * std::ldexp(1.0, -24); }

int g_blas_cases = 0;  // products checked through the vendor BLAS
double g_blas_err = 0.0, g_blas_err_f32 = 0.0;

// fp16 of v as matmul_blas.hip rounds it (finite values beyond ±65504 held there), back in fp32.
float blas_half(float v) {
  if (std::isfinite(v)) v = std::clamp(v, -65504.0f, 65504.0f);
  return k::fp16_to_f32(k::f32_to_fp16(v));
}

// gpu_matmul_blas (ALAP_GPU_PREFILL=blas: every product of more than one token) against the fp16
// oracle Σ half(W)·half(x) in double: the products of fp16 values are exact in fp32 and only the
// fp32 sums round, |error| ≤ 2·n_cols·2^-24·Σ|terms| (twice the round-to-nearest chain: the tensor
// cores' fp32 adds may truncate). Whole scratch and a scratch of 48 rows a slice (several GEMMs,
// a partial last one), beta 0 and 1; against the f32 product only fp16 rounding of W and x, ≤ 2e-3.
// F32 weights and single tokens are gpu_matmul's, byte for byte. Where the library has no BLAS
// (gpu_blas_scratch_bytes 0: HIP, no cuBLAS) gpu_matmul_blas must be gpu_matmul too.
void check_blas(DType t, const mm_case& c, const std::vector<float>& wf, const std::vector<float>& x,
                const std::vector<double>& reff, const std::vector<double>& magf, const dbuf& dw, const dbuf& dx, const dbuf& dq,
                const std::vector<float>& y_plain, const std::string& what) {
  const uint32_t id = static_cast<uint32_t>(t);
  const bool plain = is_plain(t);
  const ScopedEnv forced("ALAP_GPU_PREFILL", "blas");
  const size_t full = g::gpu_blas_scratch_bytes(c.n_tok, c.n_cols);
  const bool blas = full != 0 && c.n_tok > 1 && t != DType::f32 && c.n_cols % 32 == 0;
  std::vector<double> ref(y_plain.size()), mag(y_plain.size());
  if (blas) {
    std::vector<float> xh(x.size()), wh(wf.size());
    for (size_t i = 0; i < x.size(); ++i) xh[i] = blas_half(x[i]);
    for (size_t i = 0; i < wf.size(); ++i) wh[i] = blas_half(wf[i]);
    for (int tk = 0; tk < c.n_tok; ++tk)
      for (int r = 0; r < c.n_rows; ++r) {
        double acc = 0.0, m = 0.0;
        for (int cc = 0; cc < c.n_cols; ++cc) {
          const double term = double(wh[size_t(r) * c.n_cols + cc]) * xh[size_t(tk) * c.n_cols + cc];
          acc += term;
          m += std::fabs(term);
        }
        ref[size_t(tk) * c.n_rows + r] = acc;
        mag[size_t(tk) * c.n_rows + r] = m + 1e-30;
      }
  }
  const double bound = 2.0 * c.n_cols * std::ldexp(1.0, -24) + 1e-7;
  // The scratch sizes tried: the whole, and one holding 48 rows of weights a slice.
  std::vector<size_t> sizes{std::max<size_t>(full, 256)};
  if (blas && t != DType::f16) sizes.push_back(full - g::kGpuBlasSliceBytes + size_t(48) * c.n_cols * 2);
  for (size_t bytes : sizes) {
    dbuf scratch(bytes), dyb(y_plain.size() * 4);
    dyb.poison();
    const std::string how = what + " blas (scratch " + std::to_string(bytes >> 10) + " KiB)";
    if (g::gpu_matmul_blas(id, dw.p, c.n_rows, c.n_cols, dx.as<float>(), plain ? nullptr : dq.p, c.n_tok,
                           dyb.as<float>(), 0.0f, scratch.p, bytes, nullptr) != 0) {
      expect(false, how + ": " + g::gpu_error_message());
      continue;
    }
    const std::vector<float> yb = dyb.get<float>();
    if (!blas) {
      expect(std::memcmp(yb.data(), y_plain.data(), yb.size() * 4) == 0, how + ": not gpu_matmul's bits");
      continue;
    }
    must(g::gpu_matmul_blas(id, dw.p, c.n_rows, c.n_cols, dx.as<float>(), plain ? nullptr : dq.p, c.n_tok,
                            dyb.as<float>(), 1.0f, scratch.p, bytes, nullptr), "matmul_blas beta 1");
    const std::vector<float> yb2 = dyb.get<float>();
    double e = 0.0, e2 = 0.0;
    for (size_t o = 0; o < ref.size(); ++o) {
      e = std::max(e, std::isfinite(yb[o]) ? std::fabs(yb[o] - ref[o]) / mag[o] : 1e30);
      e2 = std::max(e2, std::isfinite(yb2[o]) ? std::fabs(yb2[o] - 2.0 * ref[o]) / (2.0 * mag[o]) : 1e30);
    }
    g_blas_err = std::max({g_blas_err, e, e2});
    expect(e <= bound && e2 <= bound, how + ": error " + std::to_string(e) + " / beta1 " + std::to_string(e2) +
                                          " of Σ|terms| (bound " + std::to_string(bound) + ")");
    // Against the f32 product: the fp16 rounding of W and x (2^-10 of Σ|terms| at most) and the sums.
    double ef32 = 0.0;
    for (size_t o = 0; o < ref.size(); ++o) ef32 = std::max(ef32, std::fabs(yb[o] - reff[o]) / magf[o]);
    g_blas_err_f32 = std::max(g_blas_err_f32, ef32);
    expect(ef32 <= 2e-3, how + ": vs f32 product " + std::to_string(ef32));
    ++g_blas_cases;
  }
}

// One product against the oracle. Quantised types: ref = Σ_b d_b Σ_i W_i q_i (double) with W from
// dequantize_row and q, d from quantize_activations; error relative to M' (quant_bound); the dot4
// prefill kernel also to Σ|terms| with its former 1e-5 bound; the mma kernels' MR 128, 64 and 32
// byte for byte against each other (the same steps in the same order). (A check that the dot4
// kernel on 16-token slices gives its 64-token bits failed on the H200 for Q4_K/Q5_K/Q6_K, whose
// ≤ 16-token products take another path: it was never a property of that kernel, and is gone.)
void run_matmul_case(DType t, const mm_case& c, std::mt19937& rng) {
  const uint32_t id = static_cast<uint32_t>(t);
  const std::vector<uint8_t> w = make_weights(t, c.n_rows, c.n_cols, rng);
  std::vector<float> x(size_t(c.n_tok) * c.n_cols);
  for (int i = 0; i < c.n_tok; ++i) {  // per-token scale: tokens differ in magnitude
    const std::vector<float> row = randn(c.n_cols, rng, 0.2f + 0.3f * float(i % 7));
    std::copy(row.begin(), row.end(), x.begin() + size_t(i) * c.n_cols);
  }
  const bool plain = is_plain(t);
  std::vector<float> wf(size_t(c.n_rows) * c.n_cols);
  const size_t rb = row_bytes(t, c.n_cols);
  for (int r = 0; r < c.n_rows; ++r) k::dequantize_row(t, w.data() + rb * r, wf.data() + size_t(r) * c.n_cols, c.n_cols);
  // B: W of each row with its quants zeroed (the min term; 0 for types without one).
  std::vector<float> wmin(wf.size(), 0.0f);
  if (const auto [z0, z1] = quant_bytes_of_min_type(t); z1 > 0) {
    const int bb = k::dtype_info(id)->block_bytes;
    std::vector<uint8_t> row(rb);
    for (int r = 0; r < c.n_rows; ++r) {
      std::memcpy(row.data(), w.data() + rb * r, rb);
      for (size_t o = 0; o < rb; o += size_t(bb)) std::fill(row.begin() + long(o) + z0, row.begin() + long(o) + z1, 0);
      k::dequantize_row(t, row.data(), wmin.data() + size_t(r) * c.n_cols, c.n_cols);
    }
  }
  std::vector<double> ref(size_t(c.n_tok) * c.n_rows), mag(ref.size()), reff(ref.size()), magf(ref.size());
  std::vector<double> mag2(ref.size());
  std::vector<int8_t> q;
  std::vector<float> d;
  if (!plain) {
    q.resize(x.size());
    d.resize(x.size() / 32);
    std::vector<int32_t> s(x.size() / 32), s4(x.size() / 4);
    k::quantize_activations(x.data(), c.n_tok, c.n_cols, q.data(), d.data(), s.data(), s4.data());
  }
  for (int tk = 0; tk < c.n_tok; ++tk)
    for (int r = 0; r < c.n_rows; ++r) {
      const float* wr = wf.data() + size_t(r) * c.n_cols;
      const float* xr = x.data() + size_t(tk) * c.n_cols;
      const float* br = wmin.data() + size_t(r) * c.n_cols;
      double acc = 0.0, m = 0.0, m2 = 0.0, accf = 0.0, mf = 0.0;
      for (int cc = 0; cc < c.n_cols; ++cc) {
        accf += double(wr[cc]) * xr[cc];
        mf += std::fabs(double(wr[cc]) * xr[cc]);
      }
      if (!plain) {
        for (int b = 0; b < c.n_cols / 32; ++b) {
          double ib = 0.0, mb = 0.0, mb2 = 0.0;
          for (int i = 32 * b; i < 32 * b + 32; ++i) {
            const double qi = q[size_t(tk) * c.n_cols + i];
            const double term = double(wr[i]) * qi;
            ib += term;
            mb += std::fabs(term);
            mb2 += (std::fabs(double(wr[i]) - br[i]) + std::fabs(double(br[i]))) * std::fabs(qi);
          }
          const double db = d[size_t(tk) * (c.n_cols / 32) + b];
          acc += db * ib;
          m += db * mb;
          m2 += db * mb2;
        }
      } else {
        acc = accf;
        m = mf;
      }
      const size_t o = size_t(tk) * c.n_rows + r;
      ref[o] = acc;
      mag[o] = m + 1e-30;
      mag2[o] = plain ? mag[o] : m2 + 1e-30;
      reff[o] = accf;
      magf[o] = mf + 1e-30;
    }

  dbuf dw(w), dx(x), dy(size_t(c.n_tok) * c.n_rows * 4);
  dbuf dq(plain ? 16 : g::gpu_act_q8_bytes(c.n_tok, c.n_cols));
  if (!plain) must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, c.n_tok, c.n_cols, nullptr), "quantize");
  dy.poison();
  const std::string what = std::string(tname(t)) + " rows " + std::to_string(c.n_rows) + " cols " +
                           std::to_string(c.n_cols) + " tokens " + std::to_string(c.n_tok);
  if (g::gpu_matmul(id, dw.p, c.n_rows, c.n_cols, dx.as<float>(), plain ? nullptr : dq.p, c.n_tok, dy.as<float>(), 0.0f,
                    nullptr) != 0) {
    expect(false, what + ": " + g::gpu_error_message());
    return;
  }
  const std::vector<float> y = dy.get<float>();
  const double bound = plain ? 1e-5 : quant_bound(c.n_cols);
  // Largest |y − ref| / M' over the outputs (scale: 1 for y, 2 for beta 1 on y).
  auto max_err = [&](const std::vector<float>& v, double scale, const std::vector<double>& m) {
    double e = 0.0;
    for (size_t o = 0; o < ref.size(); ++o)
      e = std::max(e, std::isfinite(v[o]) ? std::fabs(v[o] - scale * ref[o]) / (scale * m[o]) : 1e30);
    return e;
  };
  if (!plain && c.n_tok > 16) {
    // Prefill through each kernel (ALAP_GPU_PREFILL, matmul.hip; on HIP and pre-sm_80 devices the
    // mma names fall back to dot4).
    auto run_with = [&](const char* v) {
      dbuf dyv(size_t(c.n_tok) * c.n_rows * 4);
      dyv.poison();
      const ScopedEnv kernel("ALAP_GPU_PREFILL", v);
      must(g::gpu_matmul(id, dw.p, c.n_rows, c.n_cols, nullptr, dq.p, c.n_tok, dyv.as<float>(), 0.0f, nullptr),
           "matmul prefill variant");
      return dyv.get<float>();
    };
    const std::vector<float> y4 = run_with("dot4"), y128 = run_with("mma128");
    const std::vector<float> y64 = run_with("mma64"), y32 = run_with("mma32");
    auto same = [](const std::vector<float>& a, const std::vector<float>& b) {
      return std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
    };
    expect(same(y64, y128) && same(y32, y128), what + ": mma64 / mma32 differ from mma128");
    expect(same(y, y128), what + ": the automatic choice differs from mma128 (rows a block change no bit)");
    const double e4 = max_err(y4, 1.0, mag), e4b = max_err(y4, 1.0, mag2), em = max_err(y128, 1.0, mag2);
    g_mm_err_dot4 = std::max(g_mm_err_dot4, e4);
    g_mm_err_mma = std::max(g_mm_err_mma, em);
    g_mm_tol_use = std::max(g_mm_tol_use, std::max(e4b, em) / bound);
    expect(e4 <= 1e-5 && e4b <= bound, what + ": dot4 error " + std::to_string(e4) + " / " + std::to_string(e4b));
    expect(em <= bound, what + ": mma error " + std::to_string(em) + " > bound " + std::to_string(bound));
    ++g_mm_prefill_cases;
  }
  check_blas(t, c, wf, x, reff, magf, dw, dx, dq, y, what);
  // beta = 1 on the same output: y + W·x = 2·W·x.
  must(g::gpu_matmul(id, dw.p, c.n_rows, c.n_cols, dx.as<float>(), plain ? nullptr : dq.p, c.n_tok, dy.as<float>(), 1.0f,
                     nullptr), "matmul beta 1");
  const std::vector<float> y2 = dy.get<float>();
  const double err = max_err(y, 1.0, mag2), err2 = max_err(y2, 2.0, mag2);
  double errf = 0.0;
  for (size_t o = 0; o < ref.size(); ++o) errf = std::max(errf, std::fabs(y[o] - reff[o]) / magf[o]);
  (plain ? g_mm_err_plain : g_mm_err_q) = std::max(plain ? g_mm_err_plain : g_mm_err_q, std::max(err, err2));
  if (!plain) {
    g_mm_err_cpu = std::max(g_mm_err_cpu, errf);
    g_mm_tol_use = std::max(g_mm_tol_use, std::max(err, err2) / bound);
  }
  // Bounds: quantised types quant_bound (above). Plain types: fp32 sums of ≤ 4352 products in
  // ≤ 160-term chains, 1e-5 relative to Σ|terms|. Against the f32 product (activations not
  // quantised) only the quantisation error of x remains: ≤ 2e-2.
  expect(err <= bound && err2 <= bound, what + ": error " + std::to_string(err) + " / beta1 " + std::to_string(err2) +
                                            " (bound " + std::to_string(bound) + ")");
  expect(errf <= 2e-2, what + ": vs f32 product " + std::to_string(errf));
}

// gpu_matmul_blas's own choice (ALAP_GPU_PREFILL unset): BLAS from 128 tokens on matrices of
// ≥ 2^21 weights and from 1024 tokens on ≥ 2^19 (matmul_blas.hip, blas_pays), else gpu_matmul.
// Each product's bits against the forced BLAS product and gpu_matmul's; with no BLAS in the
// library, always gpu_matmul's.
void test_blas_choice(std::mt19937& rng) {
  struct shape {
    int rows, cols, tokens;
    bool blas;
  };
  // "auto" is the choice with the variable unset (matmul.hip and matmul_blas.hip alike).
  const ScopedEnv automatic("ALAP_GPU_PREFILL", "auto");
  const bool have = g::gpu_blas_scratch_bytes(1024, 1024) != 0;
  // Where the vendor BLAS is known to be installed (run_ops_h200.sh) a library without it has
  // failed to open it or failed its own check (matmul_blas.hip's self_check).
  if (const char* e = std::getenv("ALAP_GPU_EXPECT_BLAS"); e != nullptr && std::string(e) == "1")
    expect(have, "no vendor BLAS although ALAP_GPU_EXPECT_BLAS=1: not opened, or its check failed");
  // What gpu_blas_status says agrees: ready after the check above passed, else a reason.
  {
    char name[32] = {}, file[256] = {};
    const int st = g::gpu_blas_status(name, sizeof name, file, sizeof file);
    expect(have == (st == g::gpu_blas_ready), "gpu_blas_status " + std::to_string(st) + " beside a scratch of " +
                                                  std::to_string(g::gpu_blas_scratch_bytes(1024, 1024)) + " bytes");
    expect(std::string(name) == "cuBLAS" || std::string(name) == "rocBLAS" || (st == g::gpu_blas_not_built && !*name),
           std::string("gpu_blas_status named ") + name);
    expect(st != g::gpu_blas_not_looked_for, "gpu_blas_status: not looked for after gpu_blas_scratch_bytes");
    expect((st == g::gpu_blas_not_found || st == g::gpu_blas_not_built) == (*file == '\0'),
           std::string("gpu_blas_status: file '") + file + "' with state " + std::to_string(st));
    std::printf("blas status %d: %s %s\n", st, name, file);
    const ScopedEnv off("ALAP_GPU_PREFILL", "kernels");
    expect(g::gpu_blas_status(nullptr, 0, nullptr, 0) == (st == g::gpu_blas_not_built ? st : g::gpu_blas_off),
           "gpu_blas_status with ALAP_GPU_PREFILL=kernels");
  }
  for (const shape& sh : {shape{2048, 1024, 128, true}, shape{2048, 1024, 127, false}, shape{1024, 1024, 128, false},
                          shape{1024, 512, 1024, true}, shape{1024, 480, 1024, false}}) {
    const std::vector<uint8_t> w = make_weights(DType::q8_0, sh.rows, sh.cols, rng);
    const std::vector<float> x = randn(size_t(sh.tokens) * sh.cols, rng);
    dbuf dw(w), dx(x), dq(g::gpu_act_q8_bytes(sh.tokens, sh.cols));
    must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, sh.tokens, sh.cols, nullptr), "quantize");
    // The scratch that forced BLAS asks for: under "auto" a product of fewer than 128 tokens gets
    // none, and gpu_matmul_blas would then fall back to gpu_matmul even when forced.
    const size_t bytes = [&] {
      const ScopedEnv forced("ALAP_GPU_PREFILL", "blas");
      return std::max<size_t>(g::gpu_blas_scratch_bytes(sh.tokens, sh.cols), 256);
    }();
    dbuf scratch(bytes), dy(size_t(sh.tokens) * sh.rows * 4);
    auto product = [&](const char* env, bool blas) {
      const ScopedEnv choice("ALAP_GPU_PREFILL", env);
      dy.poison();
      if (blas) {
        must(g::gpu_matmul_blas(uint32_t(DType::q8_0), dw.p, sh.rows, sh.cols, dx.as<float>(), dq.p, sh.tokens,
                                dy.as<float>(), 0.0f, scratch.p, bytes, nullptr), "matmul_blas");
      } else {
        must(g::gpu_matmul(uint32_t(DType::q8_0), dw.p, sh.rows, sh.cols, dx.as<float>(), dq.p, sh.tokens,
                           dy.as<float>(), 0.0f, nullptr), "matmul");
      }
      return dy.get<float>();
    };
    const std::vector<float> chosen = product("auto", true), forced = product("blas", true),
                             plain = product("auto", false);
    const bool expect_blas = have && sh.blas;
    const std::vector<float>& want = expect_blas ? forced : plain;
    expect(std::memcmp(chosen.data(), want.data(), chosen.size() * 4) == 0,
           "blas choice " + std::to_string(sh.rows) + " x " + std::to_string(sh.cols) + ", " +
               std::to_string(sh.tokens) + " tokens: not " + (expect_blas ? "the BLAS product" : "gpu_matmul's"));
    if (have) expect(std::memcmp(forced.data(), plain.data(), forced.size() * 4) != 0, "BLAS gave gpu_matmul's bits");
  }
  std::printf("blas choice: %s\n", have ? "checked on 5 shapes" : "no BLAS in this library: gpu_matmul throughout");
}

void test_matmul(std::mt19937& rng, bool small) {
  const DType types[] = {DType::f32,  DType::f16,  DType::bf16, DType::q4_0, DType::q4_1,  DType::q5_0,
                         DType::q5_1, DType::q8_0, DType::q2_k, DType::q3_k, DType::q4_k,  DType::q5_k,
                         DType::q6_k, DType::iq4_nl, DType::iq4_xs};
  for (DType t : types) {
    if (!type_selected(t)) continue;
    std::vector<mm_case> cases;
    if (is_plain(t)) {
      cases = {{67, 100, 1}, {67, 512, 3}, {130, 96, 17}, {70, 264, 64}, {130, 512, 100}, {33, 4096, 1}, {5, 33, 2}};
    } else if (k::dtype_info(static_cast<uint32_t>(t))->block_elems == 32) {
      cases = {{67, 512, 1}, {67, 96, 3}, {130, 288, 17}, {70, 160, 64}, {130, 544, 100}, {129, 96, 65},
               {255, 1056, 33}, {33, 4128, 1}, {5, 96, 1}, {1030, 544, 1}, {2053, 4128, 1}};
    } else {
      // 4352 = 17 super-blocks: rows of Q2_K, Q3_K, Q6_K, IQ4_XS are then not multiples of 16 bytes.
      // 8448 columns: Q4_K/Q5_K/Q6_K long-row decode pieces (32 values; matmul.hip), 2-3 a thread.
      // Prefill: rows 129/255 and tokens 65/33 one past / short of the mma kernel's tiles (MR 128,
      // 64, 32 × 64 tokens); 4352 columns also for prefill (Q6_K's int32 block sums near 2^24).
      cases = {{67, 512, 1}, {67, 512, 3}, {130, 768, 17}, {70, 256, 64}, {130, 512, 100}, {129, 256, 65},
               {255, 4352, 33}, {33, 4352, 1}, {1030, 768, 1}, {2053, 8448, 1}, {2053, 4352, 1}};
    }
    // The last decode cases have enough rows for the decode kernel's 4 and 8 rows per block
    // (matmul.hip: fewer rows a block while the grid would be small), a partial last block of rows,
    // and threads with one, two and three pieces of the row.
    if (small) cases = {cases[0], cases[2], cases[cases.size() - 2], cases.back()};
    for (const mm_case& c : cases) run_matmul_case(t, c, rng);
  }
  std::printf("matmul: max error %.2e (quantised, vs int8 oracle, of M'; prefill mma %.2e, dot4 %.2e of Σ|terms|), "
              "%.2e (F32/F16/BF16); largest error / bound %.3f; vs f32 product %.2e; %d prefill cases through "
              "dot4 and mma128/64/32\n",
              g_mm_err_q, g_mm_err_mma, g_mm_err_dot4, g_mm_err_plain, g_mm_tol_use, g_mm_err_cpu, g_mm_prefill_cases);
  std::printf("matmul blas: %d products through BLAS (0: the library has none), max error %.2e of Σ|terms| against "
              "the fp16 oracle, %.2e against the f32 product\n",
              g_blas_cases, g_blas_err, g_blas_err_f32);
}

// ---- elementwise -------------------------------------------------------------------------------

double max_rel(const std::vector<float>& a, const std::vector<double>& b, double floor_abs) {
  double e = 0.0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double d = std::isfinite(a[i]) ? std::fabs(a[i] - b[i]) / (std::fabs(b[i]) + floor_abs) : 1e30;
    e = std::max(e, d);
  }
  return e;
}

void test_elementwise(std::mt19937& rng) {
  {  // RMSNorm: with and without weight, in place, odd width
    for (int n_cols : {4096, 100}) {
      const int n_rows = 3;
      const std::vector<float> x = randn(size_t(n_rows) * n_cols, rng, 3.0f), w = randn(n_cols, rng);
      dbuf dx(x), dw(w), dy(x.size() * 4);
      for (int with_w = 0; with_w < 2; ++with_w) {
        std::vector<double> ref(x.size());
        for (int r = 0; r < n_rows; ++r) {
          double ss = 0.0;
          for (int c = 0; c < n_cols; ++c) ss += double(x[r * n_cols + c]) * x[r * n_cols + c];
          const double inv = 1.0 / std::sqrt(ss / n_cols + 1e-5);
          for (int c = 0; c < n_cols; ++c) ref[r * n_cols + c] = (with_w ? w[c] : 1.0) * x[r * n_cols + c] * inv;
        }
        dy.poison();
        must(g::gpu_rms_norm(dx.as<float>(), with_w ? dw.as<float>() : nullptr, dy.as<float>(), n_cols, n_rows, 1e-5f,
                             nullptr), "rms_norm");
        // fp32 products of an exact-in-double scale: a few ulps.
        expect(max_rel(dy.get<float>(), ref, 1e-6) < 2e-6, "rms_norm cols " + std::to_string(n_cols) + " weight " +
                                                              std::to_string(with_w));
      }
      dbuf dz(x);  // in place
      must(g::gpu_rms_norm(dz.as<float>(), dw.as<float>(), dz.as<float>(), n_cols, n_rows, 1e-5f, nullptr), "rms in place");
      must(g::gpu_rms_norm(dx.as<float>(), dw.as<float>(), dy.as<float>(), n_cols, n_rows, 1e-5f, nullptr), "rms");
      expect(dz.get<float>() == dy.get<float>(), "rms_norm in place equals out of place");
    }
  }
  {  // add_bias, add (aliased), swiglu (aliased)
    const int n_cols = 300, n_rows = 7;
    const size_t n = size_t(n_cols) * n_rows;
    const std::vector<float> a = randn(n, rng), b = randn(n, rng, 4.0f), bias = randn(n_cols, rng);
    dbuf da(a), db(b), dbias(bias), dy(n * 4);
    must(g::gpu_copy_on_device(dy.p, da.p, n * 4, nullptr), "copy on device");
    must(g::gpu_add_bias(dy.as<float>(), dbias.as<float>(), n_cols, n_rows, nullptr), "add_bias");
    std::vector<float> y = dy.get<float>();
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && y[i] == a[i] + bias[i % n_cols];
    expect(ok, "add_bias exact");
    must(g::gpu_add(da.as<float>(), db.as<float>(), da.as<float>(), n, nullptr), "add aliased");
    y = da.get<float>();
    ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && y[i] == a[i] + b[i];
    expect(ok, "add exact (y aliases a)");
    dbuf dg(b), du(a);
    must(g::gpu_swiglu(dg.as<float>(), du.as<float>(), dg.as<float>(), n, nullptr), "swiglu");
    y = dg.get<float>();
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i) ref[i] = double(b[i]) / (1.0 + std::exp(-double(b[i]))) * a[i];
    expect(max_rel(y, ref, 1e-6) < 1e-5, "swiglu (out aliases gate), expf ulps");  // ≤ 4 ulps of fp32 ops
  }
  {  // RoPE: normal and neox, partial rotation, freq factors and freq_scale, large positions
    const int n_tok = 3, n_heads = 4, hd = 128;
    for (int neox = 0; neox < 2; ++neox)
      for (int variant = 0; variant < 2; ++variant) {
        const int n_rot = variant ? 64 : 128;
        const float base = variant ? 500000.0f : 10000.0f, fscale = variant ? 0.25f : 1.0f;
        const int pos0 = variant ? 70000 : 5;
        const std::vector<float> x = randn(size_t(n_tok) * n_heads * hd, rng);
        std::vector<float> ff(n_rot / 2);
        for (int i = 0; i < n_rot / 2; ++i) ff[i] = 1.0f + float(i % 5);
        dbuf dx(x), dff(ff);
        must(g::gpu_rope(dx.as<float>(), n_tok, n_heads, hd, n_rot, pos0, base, fscale, variant ? dff.as<float>() : nullptr,
                         neox, nullptr), "rope");
        std::vector<double> ref(x.begin(), x.end());
        for (int t = 0; t < n_tok; ++t)
          for (int i = 0; i < n_rot / 2; ++i) {  // core/model/forward.cpp: angle in double, cos/sin as float
            const double f = variant ? ff[i] : 1.0;
            const double ang = double(pos0 + t) * (fscale * std::pow(double(base), -2.0 * i / n_rot) / f);
            const float cs = float(std::cos(ang)), sn = float(std::sin(ang));
            for (int h = 0; h < n_heads; ++h) {
              const size_t o = (size_t(t) * n_heads + h) * hd;
              const size_t i0 = o + (neox ? i : 2 * i), i1 = o + (neox ? i + n_rot / 2 : 2 * i + 1);
              const float x0 = x[i0], x1 = x[i1];
              ref[i0] = x0 * cs - x1 * sn;
              ref[i1] = x0 * sn + x1 * cs;
            }
          }
        // Same angles and float rotation: differences only from fused multiply-adds (~1 ulp of |x|).
        expect(max_rel(dx.get<float>(), ref, 1.0) < 1e-6,
               "rope neox " + std::to_string(neox) + " variant " + std::to_string(variant));
      }
  }
  {  // argmax: first on ties
    const int n = 100003;
    std::vector<float> x = randn(n, rng);
    x[777] = 10.0f;
    x[50000] = 10.0f;
    dbuf dx(x), dout(4);
    must(g::gpu_argmax(dx.as<float>(), n, dout.as<int32_t>(), nullptr), "argmax");
    expect(dout.get<int32_t>()[0] == 777, "argmax picks the first of two equal maxima");
    x[n - 1] = 11.0f;
    dbuf dx2(x);
    must(g::gpu_argmax(dx2.as<float>(), n, dout.as<int32_t>(), nullptr), "argmax");
    expect(dout.get<int32_t>()[0] == n - 1, "argmax at the last index");
    std::vector<float> same(1000, -2.5f);
    dbuf dx3(same);
    must(g::gpu_argmax(dx3.as<float>(), 1000, dout.as<int32_t>(), nullptr), "argmax");
    expect(dout.get<int32_t>()[0] == 0, "argmax of all-equal is 0");
  }
  {  // fp16 KV writer
    const int n_tok = 5, n_kv = 2, hd = 64, cap = 20, pos0 = 7;
    const std::vector<float> x = randn(size_t(n_tok) * n_kv * hd, rng);
    std::vector<uint16_t> cache(size_t(n_kv) * cap * hd, 0x7E00);
    dbuf dx(x), dc(cache);
    must(g::gpu_kv_f16_store(dx.as<float>(), dc.as<uint16_t>(), n_tok, n_kv, hd, cap, pos0, nullptr), "kv_f16_store");
    for (int t = 0; t < n_tok; ++t)
      for (int h = 0; h < n_kv; ++h)
        for (int d = 0; d < hd; ++d)
          cache[(size_t(h) * cap + pos0 + t) * hd + d] = k::f32_to_fp16(x[(size_t(t) * n_kv + h) * hd + d]);
    expect(dc.get<uint16_t>() == cache, "kv_f16_store bits (and rows outside untouched)");
    expect(g::gpu_kv_f16_store(dx.as<float>(), dc.as<uint16_t>(), n_tok, n_kv, hd, cap, cap - 2, nullptr) != 0,
           "kv_f16_store past capacity refused");
  }
}

// The IQ4 code table (FORMATS.md §2.9) on hand-built rows, independent of the CPU oracle: d = 1
// and, for IQ4_XS, every sub-block's ls = 33 (scales_l nibbles 1, scales_h fields 2), so each value
// is the table's entry itself. Block b's byte j holds codes (j + b) % 16 (low) and (15 − j + 3b) % 16
// (high): every code in both nibbles, in several positions.
void test_get_rows_iq4_table() {
  const int kValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  for (DType t : {DType::iq4_nl, DType::iq4_xs}) {
    if (!type_selected(t)) continue;
    const int n_cols = 512, n_blk = n_cols / 32;
    std::vector<uint8_t> w(row_bytes(t, n_cols));
    std::vector<float> want(n_cols);
    for (int b = 0; b < n_blk; ++b) {
      uint8_t* qs;
      if (t == DType::iq4_nl) {
        uint8_t* p = w.data() + 18 * b;
        p[0] = 0x00, p[1] = 0x3C;  // fp16 1.0
        qs = p + 2;
      } else {
        uint8_t* p = w.data() + 136 * (b / 8);
        p[0] = 0x00, p[1] = 0x3C, p[2] = 0xAA, p[3] = 0xAA;  // d = 1, scales_h: 2 for every sub-block
        for (int i = 0; i < 4; ++i) p[4 + i] = 0x11;           // scales_l: 1 → ls = 1 | 2 << 4 = 33
        qs = p + 8 + 16 * (b % 8);
      }
      for (int j = 0; j < 16; ++j) {
        const int lo = (j + b) % 16, hi = (15 - j + 3 * b) % 16;
        qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        want[32 * b + j] = float(kValues[lo]);
        want[32 * b + 16 + j] = float(kValues[hi]);
      }
    }
    const std::vector<int32_t> ids = {0};
    dbuf dw(w), di(ids), dout(size_t(n_cols) * 4);
    dout.poison();
    must(g::gpu_get_rows(static_cast<uint32_t>(t), dw.p, 1, n_cols, di.as<int32_t>(), 1, dout.as<float>(), nullptr),
         "get_rows iq4 table");
    std::vector<float> cpu(n_cols);
    k::dequantize_row(t, w.data(), cpu.data(), n_cols);
    expect(dout.get<float>() == want, std::string("get_rows ") + tname(t) + ": the code table on a hand-built row");
    expect(cpu == want, std::string("dequantize_row ") + tname(t) + ": the same hand-built row (the oracle agrees)");
  }
}

void test_get_rows(std::mt19937& rng) {
  test_get_rows_iq4_table();
  const DType types[] = {DType::f32,  DType::f16,  DType::bf16, DType::q4_0, DType::q4_1,  DType::q5_0,
                         DType::q5_1, DType::q8_0, DType::q2_k, DType::q3_k, DType::q4_k,  DType::q5_k,
                         DType::q6_k, DType::iq4_nl, DType::iq4_xs};
  double worst = 0.0;
  for (DType t : types) {
    if (!type_selected(t)) continue;
    const int n_rows = 37, n_cols = is_plain(t) ? 100 : (k::dtype_info(static_cast<uint32_t>(t))->block_elems == 32 ? 288 : 512);
    const std::vector<uint8_t> w = make_weights(t, n_rows, n_cols, rng);
    const std::vector<int32_t> ids = {3, 0, 36, 3, -1, 37, 20};
    dbuf dw(w), di(ids), dout(ids.size() * n_cols * 4);
    dout.poison();
    must(g::gpu_get_rows(static_cast<uint32_t>(t), dw.p, n_rows, n_cols, di.as<int32_t>(), int(ids.size()),
                         dout.as<float>(), nullptr), "get_rows");
    const std::vector<float> out = dout.get<float>();
    const size_t rb = row_bytes(t, n_cols);
    std::vector<float> row(n_cols);
    double err = 0.0;
    for (size_t i = 0; i < ids.size(); ++i) {
      const bool valid = ids[i] >= 0 && ids[i] < n_rows;
      if (valid) k::dequantize_row(t, w.data() + rb * ids[i], row.data(), n_cols);
      float rmax = 1e-30f;
      for (int c = 0; c < n_cols; ++c) rmax = std::max(rmax, std::fabs(valid ? row[c] : 0.0f));
      for (int c = 0; c < n_cols; ++c) {
        const float v = out[i * n_cols + c];
        err = std::max(err, std::isfinite(v) ? std::fabs(v - (valid ? row[c] : 0.0f)) / (valid ? rmax : 1.0f) : 1e30);
      }
    }
    worst = std::max(worst, err);
    // a·w + b against the CPU's d·sc·q − dmin·m: one or two roundings of the row's magnitude.
    expect(err < 1e-6, std::string("get_rows ") + tname(t) + " error " + std::to_string(err));
  }
  std::printf("get_rows: max error %.2e (relative to the row's largest value)\n", worst);
}

// ---- f16 prefill attention -------------------------------------------------------------------

void test_attn_f16(std::mt19937& rng, bool small) {
  struct cfg {
    int hd, n_kv, group, n_q, pos0;
    bool one_group = false;  // ALAP_GPU_PREFILL_ATTN=1: one KV group a block
  };
  // 128-token chunks after cached rows: the block's KV groups (4 at head_dim 64, 2 at 128) take
  // alternate tiles and are merged; the same with one group.
  std::vector<cfg> cases = {{64, 2, 4, 17, 5},       {128, 1, 2, 40, 0},       {256, 1, 1, 3, 30},
                            {96, 2, 3, 20, 9},       {128, 8, 4, 1, 100},      {128, 2, 4, 128, 300},
                            {64, 2, 7, 128, 200},    {128, 2, 4, 128, 300, true}, {64, 2, 7, 128, 200, true}};
  if (small) cases = {{64, 2, 2, 17, 5}, {96, 1, 1, 3, 9}, {128, 1, 2, 20, 100}};
  double worst = 0.0, worst_over = 0.0;
  for (const cfg& c : cases) {
    const int n_head = c.n_kv * c.group, cap = c.pos0 + c.n_q + 3, hd = c.hd;
    std::vector<uint16_t> kc(size_t(c.n_kv) * cap * hd), vc(kc.size());
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (size_t i = 0; i < kc.size(); ++i) {
      kc[i] = k::f32_to_fp16(nd(rng));
      vc[i] = k::f32_to_fp16(nd(rng));
    }
    const std::vector<float> q = randn(size_t(c.n_q) * n_head * hd, rng, 1.5f);
    dbuf dq(q), dk(kc), dv(vc), dout(q.size() * 4);
    dout.poison();
    g::attn_f16_prefill_params p{};
    p.q = dq.as<float>();
    p.k_f16 = dk.as<uint16_t>();
    p.v = dv.as<uint16_t>();
    p.out = dout.as<float>();
    p.n_q = c.n_q;
    p.n_head = n_head;
    p.n_kv_head = c.n_kv;
    p.head_dim = hd;
    p.capacity = cap;
    p.pos0 = c.pos0;
    p.scale = 1.0f / std::sqrt(float(hd));
    if (c.one_group) setenv("ALAP_GPU_PREFILL_ATTN", "1", 1);
    must(g::attn_f16_prefill_run(&p, nullptr), "attn_f16_prefill_run");
    unsetenv("ALAP_GPU_PREFILL_ATTN");
    const std::vector<float> out = dout.get<float>();
    const bool fp16_p = alap::test::prefill_on_matrix_units(hd);
    double err = 0.0, over = 0.0;  // largest error; largest error over its element's bound
    for (int i = 0; i < c.n_q; ++i)
      for (int h = 0; h < n_head; ++h) {
        const int kv = h / c.group, n_ctx = c.pos0 + i + 1;
        std::vector<double> s(n_ctx);
        double mx = -1e300;
        for (int j = 0; j < n_ctx; ++j) {
          double acc = 0.0;
          for (int d = 0; d < hd; ++d)
            acc += double(q[(size_t(i) * n_head + h) * hd + d]) * k::fp16_to_f32(kc[(size_t(kv) * cap + j) * hd + d]);
          s[j] = acc * p.scale;
          mx = std::max(mx, s[j]);
        }
        double l = 0.0;
        for (double& v : s) l += (v = std::exp(v - mx));
        for (int d = 0; d < hd; ++d) {
          double o = 0.0, abs_v = 0.0;
          for (int j = 0; j < n_ctx; ++j) {
            const double v = k::fp16_to_f32(vc[(size_t(kv) * cap + j) * hd + d]);
            o += s[j] / l * v;
            abs_v += s[j] / l * std::fabs(v);
          }
          const float got = out[(size_t(i) * n_head + h) * hd + d];
          const double e = std::isfinite(got) ? std::fabs(got - o) : 1e30;
          err = std::max(err, e);
          over = std::max(over, e / alap::test::prefill_bound(fp16_p, abs_v));
        }
      }
    worst = std::max(worst, err);
    worst_over = std::max(worst_over, over);
    // prefill_bound.h: 1e-4 absolute for fp32 arithmetic, plus fp16's rounding of each weight where
    // the matrix-unit kernel takes P in fp16.
    expect(over < 1.0, "attn_f16_prefill hd " + std::to_string(hd) + " n_q " + std::to_string(c.n_q) + " pos0 " +
                           std::to_string(c.pos0) + (c.one_group ? " (one group)" : "") + " error " + std::to_string(err));
  }
  {
    g::attn_f16_prefill_params bad{};
    expect(g::attn_f16_prefill_run(&bad, nullptr) != 0, "attn_f16_prefill refuses empty params");
  }
  std::printf("attn_f16_prefill: max abs error %.2e, largest error / bound %.2f\n", worst, worst_over);
}

// ---- bench -----------------------------------------------------------------------------------

struct timer {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double us() const { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count(); }
};

// The H200's dense int8 tensor peak (NVIDIA's figure, 1979 TOPS; 2 operations a MAC): the prefill
// columns' reference.
constexpr double kInt8PeakTops = 1979.0;

// decode_only: the quantised types at both shapes, no prefill (the variant runs of run_ops_h200.sh).
void bench(bool decode_only) {
  std::mt19937 rng(7);
  // Copy bandwidth (read + write) on 1 GiB.
  const size_t cb = size_t(1) << 30;
  dbuf a(cb), b(cb);
  must(g::gpu_fill_zero(a.p, cb, nullptr), "fill");
  for (int i = 0; i < 3; ++i) must(g::gpu_copy_on_device(b.p, a.p, cb, nullptr), "copy");
  must(g::gpu_stream_sync(nullptr), "sync");
  timer tc;
  const int nc = 10;
  for (int i = 0; i < nc; ++i) must(g::gpu_copy_on_device(b.p, a.p, cb, nullptr), "copy");
  must(g::gpu_stream_sync(nullptr), "sync");
  const double copy_gbs = 2.0 * cb * nc / (tc.us() * 1e3);
  std::printf("copy bandwidth (1 GiB device copy, read + write): %.0f GB/s\n", copy_gbs);
  std::printf("| type | rows × cols | weight MB | decode µs | GB/s | %% of copy | in a graph µs | GB/s | %% of copy | "
              "prefill 512 tok ms | TFLOP/s eq | %% of int8 peak | dot4 kernel ms | TFLOP/s eq |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  void* stream = nullptr;
  must(g::gpu_stream_create(&stream), "stream");
  std::vector<std::pair<DType, std::pair<int, int>>> shapes;
  for (DType t : {DType::q4_k, DType::q6_k, DType::q5_0, DType::q5_k, DType::q8_0, DType::q4_0, DType::q4_1,
                  DType::q5_1, DType::q2_k, DType::q3_k, DType::f16, DType::bf16, DType::f32, DType::iq4_nl,
                  DType::iq4_xs}) {  // IQ4 last: a timeout (run_ops_h200.sh) cuts them, not the rows before
    if (decode_only && is_plain(t)) continue;
    // ALAP_BENCH_TYPES (type names, e.g. "Q2_K,Q3_K") and ALAP_BENCH_ROWS (14336 or 4096) keep
    // only those (a profiler's run of one product).
    const char* only = std::getenv("ALAP_BENCH_TYPES");
    if (only != nullptr) {
      std::string list(","), key(",");
      list.append(only).append(",");
      key.append(tname(t)).append(",");
      if (list.find(key) == std::string::npos) continue;
    }
    const char* rows_env = std::getenv("ALAP_BENCH_ROWS");
    const int only_rows = rows_env != nullptr ? std::atoi(rows_env) : 0;
    if (!decode_only && only_rows == 0) shapes.push_back({t, {4096, 4096}});  // attention projections' shape
    if (only_rows != 4096) shapes.push_back({t, {14336, 4096}});
    if (t != DType::bf16 && t != DType::f32 && only_rows != 14336) shapes.push_back({t, {4096, 14336}});
  }
  std::vector<std::string> prefill_lines;  // quantised types: ms per prefill kernel
  for (const auto& [t, shape] : shapes) {
    const auto [n_rows, n_cols] = shape;
    {
      const size_t rb = row_bytes(t, n_cols), wbytes = rb * n_rows;
      // 64 distinct rows, repeated; copies rotate so that the 50 MB L2 never holds the next one.
      const std::vector<uint8_t> blk = make_weights(t, 64, n_cols, rng);
      std::vector<uint8_t> w(wbytes);
      for (int r = 0; r < n_rows; ++r) std::memcpy(w.data() + rb * r, blk.data() + rb * (r % 64), rb);
      const int copies = int(std::max<size_t>(2, (size_t(600) << 20) / wbytes + 1));
      std::vector<void*> dw(copies);
      for (void*& p : dw) {
        must(g::gpu_alloc(&p, wbytes), "alloc w");
        if (&p == &dw[0]) must(g::gpu_copy_to_device(p, w.data(), wbytes, nullptr), "upload");
        else must(g::gpu_copy_on_device(p, dw[0], wbytes, nullptr), "copy w");
      }
      const int max_tok = 512;
      const std::vector<float> x = randn(size_t(max_tok) * n_cols, rng);
      dbuf dx(x), dq(g::gpu_act_q8_bytes(max_tok, n_cols)), dy(size_t(max_tok) * n_rows * 4);
      must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, max_tok, n_cols, stream), "quantize");
      const uint32_t id = static_cast<uint32_t>(t);
      auto run = [&](int i, int n_tok) {
        must(g::gpu_matmul(id, dw[i % copies], n_rows, n_cols, dx.as<float>(), dq.p, n_tok, dy.as<float>(), 0.0f, stream),
             "matmul");
      };
      for (int i = 0; i < 20; ++i) run(i, 1);
      must(g::gpu_stream_sync(stream), "sync");
      const int reps = 400;
      timer td;
      for (int i = 0; i < reps; ++i) run(i, 1);
      must(g::gpu_stream_sync(stream), "sync");
      const double dec_us = td.us() / reps;
      // The same launches replayed from a graph: no host launch cost between kernels.
      const int per_graph = 40;
      alap_gpu_graph_t graph{};
      alap_gpu_graph_exec_t exec{};
      const auto s = static_cast<alap_gpu_stream_t>(stream);
      ALAP_GPU_CHECK(alap_gpu_stream_begin_capture(s));
      for (int i = 0; i < per_graph; ++i) run(i, 1);
      ALAP_GPU_CHECK(alap_gpu_stream_end_capture(s, &graph));
      ALAP_GPU_CHECK(alap_gpu_graph_instantiate(&exec, graph));
      ALAP_GPU_CHECK(alap_gpu_graph_launch(exec, s));
      must(g::gpu_stream_sync(stream), "sync");
      timer tg;
      for (int i = 0; i < reps / per_graph; ++i) ALAP_GPU_CHECK(alap_gpu_graph_launch(exec, s));
      must(g::gpu_stream_sync(stream), "sync");
      const double graph_us = tg.us() / (reps / per_graph * per_graph);
      (void)alap_gpu_graph_exec_destroy(exec);
      (void)alap_gpu_graph_destroy(graph);
      double pre_ms = 0.0, dot4_ms = 0.0;
      if (!decode_only) {
        run(0, max_tok);
        must(g::gpu_stream_sync(stream), "sync");
        const int preps = 10;
        timer tp;
        for (int i = 0; i < preps; ++i) run(i, max_tok);
        must(g::gpu_stream_sync(stream), "sync");
        pre_ms = tp.us() / preps / 1e3;
        if (!is_plain(t)) {  // the other prefill kernels on the same shape (ALAP_GPU_PREFILL, matmul.hip)
          char line[200];
          int len = std::snprintf(line, sizeof line, "| %s | %d × %d |", tname(t), n_rows, n_cols);
          for (const char* v : {"dot4", "mma128", "mma64", "mma32"}) {
            const ScopedEnv kernel("ALAP_GPU_PREFILL", v);
            run(0, max_tok);
            must(g::gpu_stream_sync(stream), "sync");
            timer t4;
            for (int i = 0; i < preps; ++i) run(i, max_tok);
            must(g::gpu_stream_sync(stream), "sync");
            const double ms = t4.us() / preps / 1e3;
            if (std::strcmp(v, "dot4") == 0) dot4_ms = ms;
            len += std::snprintf(line + len, sizeof line - size_t(len), " %.3f |", ms);
          }
          char auto_ms[32];
          std::snprintf(auto_ms, sizeof auto_ms, " %.3f |", pre_ms);
          prefill_lines.push_back(line + std::string(auto_ms));
        }
      }
      const double gbs = wbytes / (dec_us * 1e3), gbs_g = wbytes / (graph_us * 1e3);
      const double flop = 2.0 * n_rows * n_cols * max_tok;
      const double tf = decode_only ? 0.0 : flop / (pre_ms * 1e9), tf4 = dot4_ms > 0.0 ? flop / (dot4_ms * 1e9) : 0.0;
      std::printf("| %s | %d × %d | %.1f | %.1f | %.0f | %.0f%% | %.1f | %.0f | %.0f%% | %.2f | %.1f | %.1f%% | %.2f | "
                  "%.1f |\n", tname(t), n_rows, n_cols, wbytes / 1e6, dec_us, gbs, 100.0 * gbs / copy_gbs, graph_us,
                  gbs_g, 100.0 * gbs_g / copy_gbs, pre_ms, tf, 100.0 * tf / kInt8PeakTops, dot4_ms, tf4);
      for (void* p : dw) (void)g::gpu_release(p);
    }
  }
  if (!prefill_lines.empty()) {
    std::printf("\nprefill of 512 tokens, ms per kernel (ALAP_GPU_PREFILL):\n| type | rows × cols | dot4 | mma128 | mma64 | "
                "mma32 | auto |\n|---|---|---|---|---|---|---|\n");
    for (const std::string& l : prefill_lines) std::printf("%s\n", l.c_str());
  }
  must(g::gpu_stream_destroy(stream), "stream destroy");
}

// --bench-prefill: the quantised prefill products through each kernel (ALAP_GPU_PREFILL = dot4,
// mma128, mma64, mma32, then the automatic choice; then gpu_matmul_blas) at the products of the engine's models (random
// models of make_random_model: Llama-3-8B and Llama-3.2-1B all Q4_K; Qwen2.5-0.5B Q5_0 where the
// row is 896 long, else Q4_K) at chunks of 64, 128, 512 (the engine's) and 2048 tokens, then every quantised
// type at the 8B shapes and 512 tokens. ms a product (mean of 10 after one warm-up; weights rotate
// over copies of ≥ 200 MB together, at most 64) and TFLOP/s-equivalent (2·rows·cols·tokens / time).
void bench_prefill() {
  struct shape {
    const char* model;
    DType t;
    int rows, cols;
  };
  const DType k4 = DType::q4_k, q50 = DType::q5_0;
  std::vector<std::pair<shape, int>> runs;
  const shape engine[] = {{"8B", k4, 4096, 4096},  {"8B", k4, 1024, 4096}, {"8B", k4, 14336, 4096},
                          {"8B", k4, 4096, 14336}, {"1B", k4, 2048, 2048}, {"1B", k4, 512, 2048},
                          {"1B", k4, 8192, 2048},  {"1B", k4, 2048, 8192}, {"0.5B", q50, 896, 896},
                          {"0.5B", q50, 128, 896}, {"0.5B", q50, 4864, 896}, {"0.5B", k4, 896, 4864}};
  const char* which = std::getenv("ALAP_BENCH_PREFILL");  // "engine", "types" or both (unset)
  const bool do_engine = which == nullptr || std::strstr(which, "engine") != nullptr;
  const bool do_types = which == nullptr || std::strstr(which, "types") != nullptr;
  if (do_engine)
    for (int n_tok : {64, 128, 512, 2048})
      for (const shape& sh : engine) runs.push_back({sh, n_tok});
  if (do_types)
    for (DType t : {DType::q4_0, DType::q4_1, DType::q5_0, DType::q5_1, DType::q8_0, DType::q2_k, DType::q3_k,
                    DType::q4_k, DType::q5_k, DType::q6_k, DType::iq4_nl, DType::iq4_xs})
      for (auto [r, cc] : {std::pair{4096, 4096}, std::pair{14336, 4096}, std::pair{4096, 14336}})
        runs.push_back({{"8B", t, r, cc}, 512});
  std::mt19937 rng(11);
  void* stream = nullptr;
  must(g::gpu_stream_create(&stream), "stream");
  const char* variants[] = {"dot4", "mma128", "mma64", "mma32", "auto"};
  std::printf("| model | type | rows × cols | tokens | dot4 ms | mma128 | mma64 | mma32 | auto ms | auto TFLOP/s | "
              "%% of int8 peak | best MR | auto / best | blas ms | blas TFLOP/s | auto / blas |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [sh, n_tok] : runs) {
    const size_t rb = row_bytes(sh.t, sh.cols), wbytes = rb * sh.rows;
    const std::vector<uint8_t> blk = make_weights(sh.t, 64, sh.cols, rng);
    std::vector<uint8_t> w(wbytes);
    for (int r = 0; r < sh.rows; ++r) std::memcpy(w.data() + rb * r, blk.data() + rb * (r % 64), rb);
    const int copies = int(std::min<size_t>(64, std::max<size_t>(2, (size_t(200) << 20) / wbytes + 1)));
    std::vector<void*> dw(copies);
    for (void*& p : dw) {
      must(g::gpu_alloc(&p, wbytes), "alloc w");
      if (&p == &dw[0]) must(g::gpu_copy_to_device(p, w.data(), wbytes, nullptr), "upload");
      else must(g::gpu_copy_on_device(p, dw[0], wbytes, nullptr), "copy w");
    }
    const std::vector<float> x = randn(size_t(n_tok) * sh.cols, rng);
    dbuf dx(x), dq(g::gpu_act_q8_bytes(n_tok, sh.cols)), dy(size_t(n_tok) * sh.rows * 4);
    must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, n_tok, sh.cols, stream), "quantize");
    const uint32_t id = static_cast<uint32_t>(sh.t);
    // ms a call of run(i) (i picks the weights' copy): one warm-up, then the mean of 10.
    auto time_ms = [&](auto&& run) {
      run(1);
      must(g::gpu_stream_sync(stream), "sync");
      const int reps = 10;
      timer tp;
      for (int i = 0; i < reps; ++i) run(i);
      must(g::gpu_stream_sync(stream), "sync");
      return tp.us() / reps / 1e3;
    };
    double ms[5] = {};
    for (int v = 0; v < 5; ++v) {
      const ScopedEnv kernel("ALAP_GPU_PREFILL", variants[v]);
      ms[v] = time_ms([&](int i) {
        must(g::gpu_matmul(id, dw[i % copies], sh.rows, sh.cols, nullptr, dq.p, n_tok, dy.as<float>(), 0.0f, stream),
             "matmul");
      });
    }
    // The vendor BLAS (gpu_matmul_blas, forced; 0 where the library has none): dequantisation and
    // fp16 GEMM together.
    double blas_ms = 0.0;
    const ScopedEnv forced("ALAP_GPU_PREFILL", "blas");
    if (const size_t sb = g::gpu_blas_scratch_bytes(n_tok, sh.cols); sb != 0) {
      dbuf scratch(sb);
      blas_ms = time_ms([&](int i) {
        must(g::gpu_matmul_blas(id, dw[i % copies], sh.rows, sh.cols, dx.as<float>(), dq.p, n_tok, dy.as<float>(),
                                0.0f, scratch.p, sb, stream), "matmul_blas");
      });
    }
    const double flop = 2.0 * sh.rows * sh.cols * n_tok, tf = flop / (ms[4] * 1e9);
    int best = 1;
    for (int v = 2; v < 4; ++v) best = ms[v] < ms[best] ? v : best;
    std::printf("| %s | %s | %d × %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.1f%% | %s | %.2f | %.4f | %.1f | %.2f |\n",
                sh.model, tname(sh.t), sh.rows, sh.cols, n_tok, ms[0], ms[1], ms[2], ms[3], ms[4], tf,
                100.0 * tf / kInt8PeakTops, variants[best] + 3, ms[4] / ms[best], blas_ms,
                blas_ms > 0 ? flop / (blas_ms * 1e9) : 0.0, blas_ms > 0 ? ms[4] / blas_ms : 0.0);
    std::fflush(stdout);
    for (void* p : dw) (void)g::gpu_release(p);
  }
  must(g::gpu_stream_destroy(stream), "stream destroy");
}

}  // namespace

// ---- fused norm / SwiGLU with the activation quantiser, and graphs ---------------------------

// gpu_rms_norm_q8 and gpu_swiglu_q8 against the two calls they replace, byte for byte (y/out and the
// whole activation buffer, both poisoned alike first), in place and out of place; widths whose
// 32-blocks do not fill the last round of groups (896 = 28 blocks, 96 = 3). gpu_bias_rope_1
// against add_bias + rope.
void test_fused(std::mt19937& rng) {
  for (int n_cols : {896, 4096, 96}) {
    for (int n_rows : {1, 3}) {
      const std::vector<float> x = randn(size_t(n_rows) * n_cols, rng, 3.0f), w = randn(n_cols, rng);
      const size_t qb = g::gpu_act_q8_bytes(n_rows, n_cols);
      for (int with_w = 0; with_w < 2; ++with_w) {
        const float* wp = nullptr;
        dbuf dx(x), dw(w), y1(x.size() * 4), y2(x.size() * 4), q1(qb), q2(qb), dz(x);
        if (with_w) wp = dw.as<float>();
        y1.poison(), y2.poison(), q1.poison(), q2.poison();
        must(g::gpu_rms_norm(dx.as<float>(), wp, y1.as<float>(), n_cols, n_rows, 1e-6f, nullptr), "rms_norm");
        must(g::gpu_quantize_act_q8(y1.as<float>(), q1.p, n_rows, n_cols, nullptr), "quantize");
        must(g::gpu_rms_norm_q8(dx.as<float>(), wp, y2.as<float>(), q2.p, n_cols, n_rows, 1e-6f, nullptr), "rms_norm_q8");
        const std::string at = " cols " + std::to_string(n_cols) + " rows " + std::to_string(n_rows) + " weight " +
                               std::to_string(with_w);
        expect(y1.get<uint8_t>() == y2.get<uint8_t>(), "gpu_rms_norm_q8 y equals gpu_rms_norm" + at);
        expect(q1.get<uint8_t>() == q2.get<uint8_t>(), "gpu_rms_norm_q8 blocks equal gpu_quantize_act_q8's" + at);
        q2.poison();
        must(g::gpu_rms_norm_q8(dz.as<float>(), wp, dz.as<float>(), q2.p, n_cols, n_rows, 1e-6f, nullptr), "in place");
        expect(dz.get<uint8_t>() == y1.get<uint8_t>() && q1.get<uint8_t>() == q2.get<uint8_t>(),
               "gpu_rms_norm_q8 in place" + at);
      }
    }
  }
  // Few rows: the norm kernels split a row over several blocks (each sums the whole row, in the
  // same order); 600 rows: one block per row. A row's y and blocks must not depend on which: row r
  // of a 600-row call equals a 1-row call on row r (and the 600-row fused call its pair).
  {
    const int n_cols = 896, n_rows = 600;
    const size_t n = size_t(n_rows) * n_cols, qb = g::gpu_act_q8_bytes(n_rows, n_cols),
                 qb1 = g::gpu_act_q8_bytes(1, n_cols);
    const std::vector<float> x = randn(n, rng, 3.0f), w = randn(n_cols, rng);
    dbuf dx(x), dw(w), ya(n * 4), yp(n * 4), qa(qb), qp(qb), y1(size_t(n_cols) * 4), q1(qb1), qr(qb1);
    ya.poison(), yp.poison(), qa.poison(), qp.poison();
    must(g::gpu_rms_norm_q8(dx.as<float>(), dw.as<float>(), ya.as<float>(), qa.p, n_cols, n_rows, 1e-6f, nullptr),
         "rms_norm_q8 600 rows");
    must(g::gpu_rms_norm(dx.as<float>(), dw.as<float>(), yp.as<float>(), n_cols, n_rows, 1e-6f, nullptr),
         "rms_norm 600 rows");
    must(g::gpu_quantize_act_q8(yp.as<float>(), qp.p, n_rows, n_cols, nullptr), "quantize 600 rows");
    expect(ya.get<uint8_t>() == yp.get<uint8_t>() && qa.get<uint8_t>() == qp.get<uint8_t>(),
           "gpu_rms_norm_q8 equals gpu_rms_norm + gpu_quantize_act_q8 on 600 rows");
    const std::vector<float> ha = ya.get<float>();
    for (int r : {0, 311, n_rows - 1}) {
      y1.poison(), q1.poison(), qr.poison();
      const float* xr = dx.as<float>() + size_t(r) * n_cols;
      must(g::gpu_rms_norm_q8(xr, dw.as<float>(), y1.as<float>(), q1.p, n_cols, 1, 1e-6f, nullptr), "rms_norm_q8 1 row");
      must(g::gpu_quantize_act_q8(ya.as<float>() + size_t(r) * n_cols, qr.p, 1, n_cols, nullptr), "quantize row");
      const std::vector<float> h1 = y1.get<float>();
      expect(std::memcmp(h1.data(), ha.data() + size_t(r) * n_cols, size_t(n_cols) * 4) == 0 &&
                 q1.get<uint8_t>() == qr.get<uint8_t>(),
             "row " + std::to_string(r) + " of 600: the split 1-row gpu_rms_norm_q8 equals the one-block rows");
      y1.poison();
      must(g::gpu_rms_norm(xr, dw.as<float>(), y1.as<float>(), n_cols, 1, 1e-6f, nullptr), "rms_norm 1 row");
      const std::vector<float> h2 = y1.get<float>();
      expect(std::memcmp(h2.data(), ha.data() + size_t(r) * n_cols, size_t(n_cols) * 4) == 0,
             "row " + std::to_string(r) + " of 600: the split 1-row gpu_rms_norm equals the one-block rows");
    }
  }
  for (int n_cols : {4864, 96}) {
    for (int n_rows : {1, 5}) {
      const size_t n = size_t(n_rows) * n_cols, qb = g::gpu_act_q8_bytes(n_rows, n_cols);
      const std::vector<float> gt = randn(n, rng, 3.0f), up = randn(n, rng);
      dbuf dg(gt), du(up), o1(n * 4), q1(qb), q2(qb);
      o1.poison(), q1.poison(), q2.poison();
      must(g::gpu_swiglu(dg.as<float>(), du.as<float>(), o1.as<float>(), n, nullptr), "swiglu");
      must(g::gpu_quantize_act_q8(o1.as<float>(), q1.p, n_rows, n_cols, nullptr), "quantize");
      must(g::gpu_swiglu_q8(dg.as<float>(), du.as<float>(), dg.as<float>(), q2.p, n_cols, n_rows, nullptr), "swiglu_q8");
      const std::string at = " cols " + std::to_string(n_cols) + " rows " + std::to_string(n_rows);
      expect(dg.get<uint8_t>() == o1.get<uint8_t>(), "gpu_swiglu_q8 (out aliases gate) equals gpu_swiglu" + at);
      expect(q1.get<uint8_t>() == q2.get<uint8_t>(), "gpu_swiglu_q8 blocks equal gpu_quantize_act_q8's" + at);
    }
  }
  // gpu_bias_rope_1 against gpu_add_bias + gpu_rope on one token's [q | k | v] (14 + 2 + 2 heads
  // of 64; neox and normal pairs, with and without bias, freq factors, a far position).
  // n_rot 32: partial rotary, the last 32 columns of a head only biased.
  for (int n_rot : {64, 32}) {
    for (int neox = 0; neox < 2; ++neox) {
      for (int with_b = 0; with_b < 2; ++with_b) {
        const int H = 18, Hr = 16, D = 64, pos = 30000;
        const std::vector<float> x = randn(size_t(H) * D, rng, 2.0f), b = randn(size_t(H) * D, rng);
        std::vector<float> ffv(n_rot / 2);
        for (int i = 0; i < n_rot / 2; ++i) ffv[i] = 1.0f + 0.25f * float(i % 5);
        dbuf d1(x), d2(x), db(b), dff(ffv);
        const float* bp = with_b ? db.as<float>() : nullptr;
        if (with_b) must(g::gpu_add_bias(d1.as<float>(), bp, H * D, 1, nullptr), "add_bias");
        must(g::gpu_rope(d1.as<float>(), 1, Hr, D, n_rot, pos, 1e6f, 1.0f, dff.as<float>(), neox, nullptr), "rope");
        must(g::gpu_bias_rope_1(d2.as<float>(), bp, H, Hr, D, n_rot, pos, 1e6f, 1.0f, dff.as<float>(), neox, nullptr),
             "bias_rope_1");
        const std::vector<float> r1 = d1.get<float>(), r2 = d2.get<float>();
        // The same arithmetic, but the compiler may contract x0·cs − x1·sn into a fused multiply-add
        // differently in the two kernels: one rounding of the products apart, so the difference is
        // measured against the row's scale (an element that nearly cancels has no relative bound).
        double diff = 0.0, scale = 0.0;
        for (size_t i = 0; i < r1.size(); ++i) {
          diff = std::max(diff, double(std::fabs(r1[i] - r2[i])));
          scale = std::max(scale, double(std::fabs(r1[i])));
        }
        expect(diff <= 1e-6 * scale, "gpu_bias_rope_1 equals add_bias + rope (n_rot " + std::to_string(n_rot) +
                                         ", neox " + std::to_string(neox) + ", bias " + std::to_string(with_b) +
                                         "), max diff / max value " + std::to_string(diff / scale));
      }
    }
  }
  // gpu_rope_store_1 against gpu_bias_rope_1 (its x) and against kv_k8_store_run / gpu_kv_f16_store
  // run on its own rotated K and V (the caches, byte for byte, both poisoned alike so a stray
  // write shows): every cache mode, Qwen-0.5B and Llama-3-8B head layouts, both pair layouts.
  // Variant 1 reads the position from the device (the host's pos 0 must not be used); variant 2
  // normalises the Q and K heads (qwen3), against gpu_add_bias, gpu_rms_norm on the Q heads and on
  // the K heads, then gpu_bias_rope_1 without a bias, byte for byte.
  struct RopeShape {
    int H, Hk, D;
  };
  for (const RopeShape sh : {RopeShape{14, 2, 64}, RopeShape{32, 8, 128}, RopeShape{16, 8, 128}}) {
    for (int mode = 0; mode < 3; ++mode) {  // 0 f16, 1 k8, 2 k8v8
      for (int nv = 0; nv < 6; ++nv) {
        const int neox = nv % 2, variant = nv / 2;
        const int H = sh.H, Hk = sh.Hk, D = sh.D, n_rows = H + 2 * Hk, cap = 40, pos = 37;
        const std::vector<float> x = randn(size_t(n_rows) * D, rng, 2.0f), b = randn(size_t(n_rows) * D, rng);
        const std::vector<float> qn = randn(size_t(D), rng), kn = randn(size_t(D), rng);
        const size_t f16_bytes = size_t(Hk) * cap * D * 2, q_bytes = size_t(Hk) * cap * D,
                     d_bytes = size_t(Hk) * cap * (D / 32) * 2;
        dbuf d1(x), d2(x), db(b), dqn(qn), dkn(kn), dpos(std::vector<int32_t>{pos});
        dbuf kq1(q_bytes), kd1(d_bytes), kf1(f16_bytes), vq1(q_bytes), vd1(d_bytes), vf1(f16_bytes);
        dbuf kq2(q_bytes), kd2(d_bytes), kf2(f16_bytes), vq2(q_bytes), vd2(d_bytes), vf2(f16_bytes);
        for (dbuf* c : {&kq1, &kd1, &kf1, &vq1, &vd1, &vf1, &kq2, &kd2, &kf2, &vq2, &vd2, &vf2}) c->poison();
        g::gpu_rope_store_params p{};
        p.x = d2.as<float>();
        p.bias = db.as<float>();
        p.n_head = H, p.n_kv_head = Hk, p.head_dim = D, p.n_rot = D, p.pos = pos;
        p.freq_base = 5e5f, p.freq_scale = 1.0f, p.freq_factors = nullptr, p.neox = neox, p.capacity = cap;
        if (mode == 0) p.k_f16 = kf2.as<uint16_t>();
        else p.k_q = kq2.as<int8_t>(), p.k_d = kd2.as<uint16_t>();
        if (mode == 2) p.v_q = vq2.as<int8_t>(), p.v_d = vd2.as<uint16_t>();
        else p.v_f16 = vf2.as<uint16_t>();
        if (variant == 1) p.pos = 0, p.pos_dev = dpos.as<int32_t>();
        if (variant == 2) p.q_norm = dqn.as<float>(), p.k_norm = dkn.as<float>(), p.norm_eps = 1e-6f;
        must(g::gpu_rope_store_1(&p, nullptr), "rope_store_1");
        const float* rb = db.as<float>();
        if (variant == 2) {
          must(g::gpu_add_bias(d1.as<float>(), rb, n_rows * D, 1, nullptr), "add_bias");
          must(g::gpu_rms_norm(d1.as<float>(), dqn.as<float>(), d1.as<float>(), D, H, 1e-6f, nullptr), "q norm");
          float* k1 = d1.as<float>() + size_t(H) * D;
          must(g::gpu_rms_norm(k1, dkn.as<float>(), k1, D, Hk, 1e-6f, nullptr), "k norm");
          rb = nullptr;
        }
        must(g::gpu_bias_rope_1(d1.as<float>(), rb, n_rows, H + Hk, D, D, pos, 5e5f, 1.0f, nullptr, neox, nullptr),
             "bias_rope_1");
        const std::string at = " (H " + std::to_string(H) + ", mode " + std::to_string(mode) + ", neox " +
                               std::to_string(neox) + ", variant " + std::to_string(variant) + ")";
        expect(d1.get<uint8_t>() == d2.get<uint8_t>(), "gpu_rope_store_1's x equals gpu_bias_rope_1's" + at);
        float* k2 = d2.as<float>() + size_t(H) * D;
        float* v2 = k2 + size_t(Hk) * D;
        if (mode == 0) {
          must(g::gpu_kv_f16_store(k2, kf1.as<uint16_t>(), 1, Hk, D, cap, pos, nullptr), "kv_f16_store K");
        } else {
          const g::kv_k8_store_params kp{k2, kq1.as<int8_t>(), kd1.as<uint16_t>(), 1, Hk, D, cap, pos};
          must(g::kv_k8_store_run(&kp, nullptr), "kv_k8_store K");
        }
        if (mode == 2) {
          const g::kv_k8_store_params vp{v2, vq1.as<int8_t>(), vd1.as<uint16_t>(), 1, Hk, D, cap, pos};
          must(g::kv_k8_store_run(&vp, nullptr), "kv_k8_store V");
        } else {
          must(g::gpu_kv_f16_store(v2, vf1.as<uint16_t>(), 1, Hk, D, cap, pos, nullptr), "kv_f16_store V");
        }
        expect(kq1.get<uint8_t>() == kq2.get<uint8_t>() && kd1.get<uint8_t>() == kd2.get<uint8_t>() &&
                   kf1.get<uint8_t>() == kf2.get<uint8_t>(),
               "gpu_rope_store_1's K cache equals the separate store's" + at);
        expect(vq1.get<uint8_t>() == vq2.get<uint8_t>() && vd1.get<uint8_t>() == vd2.get<uint8_t>() &&
                   vf1.get<uint8_t>() == vf2.get<uint8_t>(),
               "gpu_rope_store_1's V cache equals the separate store's" + at);
      }
    }
  }
  {
    g::gpu_rope_store_params p{};
    float dummy = 0.0f;
    p.x = &dummy, p.n_head = 4, p.n_kv_head = 1, p.head_dim = 64, p.n_rot = 64, p.pos = 0, p.capacity = 8;
    p.freq_base = 1e4f, p.freq_scale = 1.0f;
    p.k_f16 = reinterpret_cast<uint16_t*>(&dummy);  // V given in neither form
    expect(g::gpu_rope_store_1(&p, nullptr) != 0, "rope_store_1 without a V cache refused");
    p.v_f16 = p.k_f16, p.pos = 8;
    expect(g::gpu_rope_store_1(&p, nullptr) != 0, "rope_store_1 at pos == capacity refused");
  }
  {  // A device position outside [0, capacity) writes nothing: x and the caches stay as they were.
    const int H = 4, Hk = 2, D = 64, cap = 8;
    const std::vector<float> x = randn(size_t(H + 2 * Hk) * D, rng);
    dbuf dx(x), kq(size_t(Hk) * cap * D), kd(size_t(Hk) * cap * 4), vf(size_t(Hk) * cap * D * 2);
    for (dbuf* c : {&kq, &kd, &vf}) c->poison();
    const std::vector<uint8_t> kq0 = kq.get<uint8_t>(), kd0 = kd.get<uint8_t>(), vf0 = vf.get<uint8_t>();
    for (int bad : {cap, -1}) {
      dbuf dpos(std::vector<int32_t>{bad});
      g::gpu_rope_store_params p{};
      p.x = dx.as<float>(), p.n_head = H, p.n_kv_head = Hk, p.head_dim = D, p.n_rot = D, p.pos = 3, p.capacity = cap;
      p.freq_base = 1e4f, p.freq_scale = 1.0f, p.pos_dev = dpos.as<int32_t>();
      p.k_q = kq.as<int8_t>(), p.k_d = kd.as<uint16_t>(), p.v_f16 = vf.as<uint16_t>();
      must(g::gpu_rope_store_1(&p, nullptr), "rope_store_1 at a bad device position");
      expect(dx.get<float>() == x && kq.get<uint8_t>() == kq0 && kd.get<uint8_t>() == kd0 && vf.get<uint8_t>() == vf0,
             "rope_store_1 at device position " + std::to_string(bad) + " wrote nothing");
    }
  }
  expect(g::gpu_bias_rope_1(nullptr, nullptr, 4, 5, 64, 64, 0, 1e4f, 1.0f, nullptr, 0, nullptr) != 0,
         "bias_rope_1 with more rotated heads than heads refused");
  expect(g::gpu_rms_norm_q8(nullptr, nullptr, nullptr, nullptr, 100, 1, 1e-6f, nullptr) != 0, "rms_norm_q8 width 100 refused");
  expect(g::gpu_swiglu_q8(nullptr, nullptr, nullptr, nullptr, 33, 1, nullptr) != 0, "swiglu_q8 width 33 refused");
}

// Capture runs nothing; launch runs it; a capture with other parameters updates the executable in
// place, one with other calls re-instantiates it; a synchronisation inside a capture spoils it.
void test_graphs() {
  void* st = nullptr;
  must(g::gpu_stream_create(&st), "stream");
  const int n = 1 << 12;
  std::vector<float> a(n), b(n);
  for (int i = 0; i < n; ++i) a[i] = float(i % 97) - 40.0f, b[i] = 0.5f * float(i % 13);
  dbuf da(a), db(b), dy(n * 4);
  must(g::gpu_stream_sync(nullptr), "sync");
  auto host_y = [&] {
    std::vector<float> h(n);
    must(g::gpu_copy_to_host(h.data(), dy.p, n * 4, st), "copy");
    must(g::gpu_stream_sync(st), "sync");
    return h;
  };
  std::vector<float> sum(n), twice(n);
  for (int i = 0; i < n; ++i) sum[i] = a[i] + b[i], twice[i] = sum[i] + b[i];
  must(g::gpu_fill_zero(dy.p, n * 4, st), "zero");
  void* exec = nullptr;
  int updated = -1;
  expect(g::gpu_graph_capture_begin(nullptr) != 0, "capturing the default stream is refused");
  must(g::gpu_graph_capture_begin(st), "capture begin");
  must(g::gpu_add(da.as<float>(), db.as<float>(), dy.as<float>(), n, st), "add (captured)");
  must(g::gpu_graph_capture_end(st, &exec, &updated), "capture end");
  expect(exec != nullptr && updated == 0, "first capture instantiates");
  expect(host_y() == std::vector<float>(n, 0.0f), "nothing runs during the capture");
  must(g::gpu_graph_launch(exec, st), "launch");
  expect(host_y() == sum, "the launch runs the captured add");
  // Same topology, other parameters (y = y + b): updated in place.
  must(g::gpu_graph_capture_begin(st), "capture begin");
  must(g::gpu_add(dy.as<float>(), db.as<float>(), dy.as<float>(), n, st), "add (captured)");
  must(g::gpu_graph_capture_end(st, &exec, &updated), "capture end");
  expect(exec != nullptr && updated == 1, "same topology: updated in place");
  must(g::gpu_graph_launch(exec, st), "launch");
  expect(host_y() == twice, "the updated graph runs with the new parameters");
  // Other topology (two calls): instantiated anew.
  must(g::gpu_graph_capture_begin(st), "capture begin");
  must(g::gpu_fill_zero(dy.p, n * 4, st), "zero (captured)");
  must(g::gpu_add(da.as<float>(), db.as<float>(), dy.as<float>(), n, st), "add (captured)");
  must(g::gpu_graph_capture_end(st, &exec, &updated), "capture end");
  expect(exec != nullptr && updated == 0, "other topology: instantiated anew");
  must(g::gpu_graph_launch(exec, st), "launch");
  must(g::gpu_graph_launch(exec, st), "launch again");
  expect(host_y() == sum, "two calls replayed twice");
  // A synchronisation inside a capture: refused, the capture spoiled, the exec dropped.
  must(g::gpu_graph_capture_begin(st), "capture begin");
  expect(g::gpu_stream_sync(st) != 0, "gpu_stream_sync while capturing fails");
  expect(g::gpu_graph_capture_end(st, &exec, &updated) != 0 && exec == nullptr, "spoiled capture: end fails, exec null");
  must(g::gpu_add(da.as<float>(), db.as<float>(), dy.as<float>(), n, st), "stream usable after a spoiled capture");
  expect(host_y() == sum, "plain launch after a spoiled capture");
  expect(g::gpu_graph_destroy(nullptr) == 0, "destroy(null)");
  must(g::gpu_stream_destroy(st), "stream destroy");
}

// gpu_logits_top against a stable sort on the host: the m best in the sampler's order (ties to
// the lower index), exact logits, the first NaN; rows of one and of many first-pass chunks (8192)
// with partial last chunks, ties (small integers, a flat row), -0.0 beside +0.0, -inf, NaN at
// the start, middle and end, the best logits gathered in a few columns (more candidates than a
// block has threads); m from 1 to 256 and above n. Output poisoned first.
void test_logits_top(std::mt19937& rng, bool small) {
  std::vector<int> sizes = {1, 7, 300, 8191, 8192, 8193, 32000, 151936, 262144};
  if (small) sizes = {7, 8193, 20000};
  for (const int n : sizes) {
    dbuf scratch(g::gpu_logits_top_scratch_bytes(n));
    for (int kind = 0; kind < 6; ++kind) {
      std::vector<float> x = randn(size_t(n), rng, 3.0f);
      if (kind == 1) for (auto& v : x) v = float(int(rng() % 7) - 3);  // many ties, zeros
      if (kind == 2) for (auto& v : x) v = 1.5f;                        // flat
      if (kind == 3) {                                                   // signed zeros and -inf
        for (size_t i = 0; i < x.size(); i += 3) x[i] = (i / 3) % 2 == 0 ? -0.0f : 0.0f;
        for (size_t i = 1; i < x.size(); i += 5) x[i] = -INFINITY;
      }
      if (kind == 5) {  // the best in every 512th column: many near the bound in one block's threads
        for (size_t i = 0; i < x.size(); ++i) x[i] += i % 512 < 20 ? 12.0f : 0.0f;
      }
      int nan_at = -1;
      if (kind == 4) {
        x[rng() % unsigned(n)] = std::nanf("");
        x[size_t(n - 1)] = -std::nanf("");
        if (rng() % 3 == 0) x[0] = std::nanf("");
        for (int i = n - 1; i >= 0; --i) nan_at = std::isnan(x[size_t(i)]) ? i : nan_at;
      }
      std::vector<int32_t> order(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) order[size_t(i)] = i;
      if (kind != 4) std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return x[a] > x[b]; });
      dbuf dx(x);
      for (const int m : {1, 40, 104, 256}) {
        dbuf dout(size_t(2 + 2 * m) * 4);
        dout.poison();
        must(g::gpu_logits_top(dx.as<float>(), n, m, dout.as<int32_t>(), scratch.p, nullptr), "logits_top");
        const std::vector<int32_t> out = dout.get<int32_t>();
        const std::string what = "logits_top n " + std::to_string(n) + " kind " + std::to_string(kind) + " m " +
                                 std::to_string(m);
        expect(out[0] == nan_at, what + ": first NaN " + std::to_string(out[0]) + " want " + std::to_string(nan_at));
        const int count = std::min(m, n);
        expect(out[1] == count, what + ": count");
        if (kind == 4) continue;  // the order of a row with NaN is not defined
        int bad = 0;
        for (int r = 0; r < count; ++r) {
          float v;
          std::memcpy(&v, &out[size_t(2 + m + r)], 4);
          const float want = x[size_t(order[size_t(r)])];
          if (out[size_t(2 + r)] != order[size_t(r)] || !(v == want)) ++bad;
        }
        expect(bad == 0, what + ": " + std::to_string(bad) + " entries differ");
      }
    }
  }
  expect(g::gpu_logits_top(nullptr, 10, 1, nullptr, nullptr, nullptr) != 0, "logits_top refuses null pointers");
  dbuf d(64);
  expect(g::gpu_logits_top(d.as<float>(), 4, 257, d.as<int32_t>(), d.p, nullptr) != 0, "logits_top refuses m > 256");
  expect(g::gpu_logits_top(d.as<float>(), 4, 0, d.as<int32_t>(), d.p, nullptr) != 0, "logits_top refuses m = 0");
}

// Device time of gpu_logits_top on rows of 151936 (Qwen2.5), 32000 (Llama 2) and 128256 (Llama 3)
// logits, m = 40 / 104 / 256: a graph of 20 calls (as a decode step's graph runs them, with no
// host launch between them) replayed 50 times, timed with events; the median over the replays
// divided by 20. Also "launched": one call timed alone, launches included (median of 200).
void bench_logits_top() {
  std::mt19937 rng(99);
  void* st = nullptr;
  must(g::gpu_stream_create(&st), "stream");
  const auto stream = static_cast<alap_gpu_stream_t>(st);
  alap_gpu_event_t e0, e1;
  ALAP_GPU_CHECK(alap_gpu_event_create(&e0));
  ALAP_GPU_CHECK(alap_gpu_event_create(&e1));
  const auto median_us = [&](int reps, const auto& body) {
    std::vector<float> us;
    for (int it = 0; it < reps; ++it) {
      ALAP_GPU_CHECK(alap_gpu_event_record(e0, stream));
      body();
      ALAP_GPU_CHECK(alap_gpu_event_record(e1, stream));
      ALAP_GPU_CHECK(alap_gpu_event_synchronize(e1));
      float ms = 0;
      ALAP_GPU_CHECK(alap_gpu_event_elapsed_ms(&ms, e0, e1));
      us.push_back(ms * 1000.0f);
    }
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  };
  for (const int n : {151936, 32000, 128256}) {
    const std::vector<float> x = randn(size_t(n), rng, 3.0f);
    dbuf dx(x), scratch(g::gpu_logits_top_scratch_bytes(n)), dout(size_t(2 + 2 * 256) * 4);
    for (const int m : {40, 104, 256}) {
      const auto call = [&] {
        must(g::gpu_logits_top(dx.as<float>(), n, m, dout.as<int32_t>(), scratch.p, st), "logits_top");
      };
      const float launched = median_us(200, call);
      void* exec = nullptr;
      must(g::gpu_graph_capture_begin(st), "capture begin");
      for (int i = 0; i < 20; ++i) call();
      must(g::gpu_graph_capture_end(st, &exec, nullptr), "capture end");
      const float graph = median_us(50, [&] { must(g::gpu_graph_launch(exec, st), "graph launch"); }) / 20.0f;
      must(g::gpu_graph_destroy(exec), "graph destroy");
      std::printf("logits_top n %d m %d: %.2f us a call in a graph, %.2f us launched alone\n", n, m, graph, launched);
    }
  }
  ALAP_GPU_CHECK(alap_gpu_event_destroy(e0));
  ALAP_GPU_CHECK(alap_gpu_event_destroy(e1));
  must(g::gpu_stream_destroy(st), "stream");
}

// What a graph of many small kernels costs when the device waits for it against when it is queued
// behind the one before (a decode step's graph is launched only once the host has the token):
// graphs of 50, 150 and 250 gpu_add launches (4096 floats, PDL as the forward's), replayed back to
// back (µs a graph, over 50) and each launched on an idle stream then waited for (wall µs a
// graph, median of 50), with and without a 1 KB copy to page-locked memory after it.
void bench_graph_idle() {
  void* st = nullptr;
  must(g::gpu_stream_create(&st), "stream");
  std::mt19937 rng(7);
  const std::vector<float> x = randn(4096, rng);
  dbuf a(x), b(x), y(x);
  void* host = nullptr;
  must(g::gpu_host_alloc(&host, 1024), "host alloc");
  const auto adds = [&](int n) {
    for (int i = 0; i < n; ++i) must(g::gpu_add(a.as<float>(), b.as<float>(), y.as<float>(), 4096, st), "add");
  };
  const auto capture_adds = [&](int n, void** exec) {
    must(g::gpu_graph_capture_begin(st), "capture begin");
    adds(n);
    must(g::gpu_graph_capture_end(st, exec, nullptr), "capture end");
  };
  for (const int nodes : {50, 150, 250}) {
    void* exec = nullptr;
    capture_adds(nodes, &exec);
    for (int i = 0; i < 5; ++i) must(g::gpu_graph_launch(exec, st), "warm-up");
    must(g::gpu_stream_sync(st), "sync");
    const timer tq;
    for (int i = 0; i < 50; ++i) must(g::gpu_graph_launch(exec, st), "launch");
    must(g::gpu_stream_sync(st), "sync");
    const double queued = tq.us() / 50;
    std::vector<double> idle, idle_copy;
    for (int i = 0; i < 50; ++i) {
      const timer ti;
      must(g::gpu_graph_launch(exec, st), "launch");
      must(g::gpu_stream_sync(st), "sync");
      idle.push_back(ti.us());
      const timer tc;
      must(g::gpu_graph_launch(exec, st), "launch");
      must(g::gpu_copy_to_host(host, y.p, 1024, st), "copy");
      must(g::gpu_stream_sync(st), "sync");
      idle_copy.push_back(tc.us());
    }
    std::sort(idle.begin(), idle.end());
    std::sort(idle_copy.begin(), idle_copy.end());
    std::printf("graph of %d adds: %.1f us queued, %.1f us launched on an idle stream and waited for, %.1f with a 1 KB "
                "copy after it\n", nodes, queued, idle[25], idle_copy[25]);
    must(g::gpu_graph_destroy(exec), "destroy");
  }
  // Does ending a capture (an update in place of another executable) wait for the device? A long
  // graph (2000 adds) runs while 250 adds are captured and exec_b updated from them; the host's
  // times from the long graph's launch to the capture's end and to the end of the update.
  {
    void* exec_long = nullptr;
    void* exec_b = nullptr;
    capture_adds(2000, &exec_long);
    capture_adds(250, &exec_b);
    for (const bool busy : {true, false, true, false}) {
      const timer t;
      if (busy) must(g::gpu_graph_launch(exec_long, st), "launch long");
      must(g::gpu_graph_capture_begin(st), "capture begin");
      adds(250);
      const double t1 = t.us();
      int updated = 0;
      must(g::gpu_graph_capture_end(st, &exec_b, &updated), "capture end");
      const double t2 = t.us();
      must(g::gpu_stream_sync(st), "sync");
      const double t3 = t.us();
      std::printf("update %s: capture %.1f us, ending (updated %d) %.1f us, then the sync %.1f us (from the launch: %.1f)\n",
                  busy ? "while a 2000-add graph runs" : "on an idle device", t1, updated, t2 - t1, t3 - t2, t3);
    }
    must(g::gpu_graph_destroy(exec_long), "destroy");
    must(g::gpu_graph_destroy(exec_b), "destroy");
  }
  must(g::gpu_host_release(host), "host release");
  must(g::gpu_stream_destroy(st), "stream");
}

// Run with ALAP_GPU_BLAS_LIBRARY naming a stand-in BLAS that answers wrongly or fails
// (fake_blas.c): the library must refuse it in its own check, so no scratch is asked for and a
// product given a scratch anyway, BLAS forced, is gpu_matmul's byte for byte.
void test_blas_refused(std::mt19937& rng) {
  const ScopedEnv forced("ALAP_GPU_PREFILL", "blas");
  expect(g::gpu_blas_scratch_bytes(256, 1024) == 0, "a wrong BLAS was taken (scratch asked for)");
  const int st = g::gpu_blas_status(nullptr, 0, nullptr, 0);
  expect(st == g::gpu_blas_failed_check || st == g::gpu_blas_incomplete,
         "gpu_blas_status " + std::to_string(st) + " for a refused BLAS");
  constexpr int rows = 64, cols = 256, tokens = 8;
  const std::vector<uint8_t> w = make_weights(DType::q8_0, rows, cols, rng);
  const std::vector<float> x = randn(size_t(tokens) * cols, rng);
  dbuf dw(w), dx(x), dq(g::gpu_act_q8_bytes(tokens, cols)), dy(size_t(tokens) * rows * 4);
  must(g::gpu_quantize_act_q8(dx.as<float>(), dq.p, tokens, cols, nullptr), "quantize");
  const size_t bytes = (size_t(48) << 20) + size_t(rows) * cols * 2;  // what a working BLAS would ask for
  dbuf scratch(bytes);
  must(g::gpu_matmul(uint32_t(DType::q8_0), dw.p, rows, cols, dx.as<float>(), dq.p, tokens, dy.as<float>(), 0.0f,
                     nullptr),
       "matmul");
  const std::vector<float> plain = dy.get<float>();
  dy.poison();
  must(g::gpu_matmul_blas(uint32_t(DType::q8_0), dw.p, rows, cols, dx.as<float>(), dq.p, tokens, dy.as<float>(), 0.0f,
                          scratch.p, bytes, nullptr),
       "matmul_blas");
  const std::vector<float> got = dy.get<float>();
  expect(std::memcmp(got.data(), plain.data(), got.size() * 4) == 0, "refused BLAS: not gpu_matmul's bits");
  const char* lib = std::getenv("ALAP_GPU_BLAS_LIBRARY");
  std::printf("blas refused: %s\n", lib != nullptr ? lib : "(ALAP_GPU_BLAS_LIBRARY unset)");
}

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const bool do_bench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
  const bool do_bench_decode = argc > 1 && std::strcmp(argv[1], "--bench-decode") == 0;
  const bool do_bench_prefill = argc > 1 && std::strcmp(argv[1], "--bench-prefill") == 0;
  int n = 0;
  if (g::gpu_device_count(&n) != 0 || n == 0) {
    std::printf("SKIP: no GPU (%s)\n", g::gpu_error_message());
    return 77;
  }
  g::gpu_device_info info{};
  must(g::gpu_device_open(0, &info), "gpu_device_open");
  std::printf("device: %s (%s), %d multiprocessors, %.1f of %.1f GiB free, runtime %d\n", info.name, info.arch,
              info.multiprocessors, info.free_bytes / 1073741824.0, info.total_bytes / 1073741824.0,
              info.runtime_version);
  if (do_bench || do_bench_decode) {
    bench(do_bench_decode);
    return 0;
  }
  if (do_bench_prefill) {
    bench_prefill();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--bench-graph") == 0) {
    bench_graph_idle();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--bench-top") == 0) {
    bench_logits_top();
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--top") == 0) {  // only gpu_logits_top, few shapes (sanitizers)
    std::mt19937 rng(1234);
    test_logits_top(rng, true);
    std::printf("%s: %d checks, %d failures\n", g_failures == 0 ? "PASS" : "FAIL", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
  }
  std::mt19937 rng(1234);
  if (argc > 1 && std::strcmp(argv[1], "--blas-refused") == 0) {  // with a stand-in BLAS (fake_blas.c)
    test_blas_refused(rng);
    std::printf("%s: %d checks, %d failures\n", g_failures == 0 ? "PASS" : "FAIL", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
  }
  if (argc > 1 && std::strcmp(argv[1], "--fused") == 0) {  // only the fused calls and graphs
    test_fused(rng);
    test_graphs();
    std::printf("%s: %d checks, %d failures\n", g_failures == 0 ? "PASS" : "FAIL", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
  }
  test_errors(n);
  test_quantize_act(rng);
  test_matmul(rng, small);
  test_blas_choice(rng);
  test_elementwise(rng);
  test_get_rows(rng);
  test_attn_f16(rng, small);
  test_fused(rng);
  test_graphs();
  test_logits_top(rng, small);
  must(g::gpu_stream_sync(nullptr), "final sync");
  std::printf("%s: %d checks, %d failures\n", g_failures == 0 ? "PASS" : "FAIL", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
