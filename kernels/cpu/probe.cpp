// Memory read-bandwidth and int8 dot-peak probes (alap/kernels/probe.h). The vector loops carry
// target attributes and run only after cpuid says the CPU has them. Measurement code, not kernels.
#include "alap/kernels/probe.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/quant.h"

#include "cpu_features.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace alap::kernels {

namespace {

using Clock = std::chrono::steady_clock;

__attribute__((target("avx2"))) uint64_t read_sum_avx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) uint64_t o[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(o), _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  return o[0] + o[1] + o[2] + o[3];
}

uint64_t read_sum_scalar(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    s += v;
  }
  return s;
}

// Runs fn(thread) on n threads at once (the caller is thread 0) and returns the wall seconds.
template <class Fn>
double run_threads(size_t n, Fn fn) {
  std::atomic<size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> ts;
  for (size_t t = 1; t < n; ++t) {
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      fn(t);
    });
  }
  while (ready.load() != n - 1) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);
  fn(0);
  for (auto& th : ts) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

size_t threads_or_all(size_t n) { return n ? n : std::max(1u, std::thread::hardware_concurrency()); }

// 12 independent accumulator chains in named registers, `iters` rounds; returns a value so nothing
// is optimised away. Each step is one asm instruction on its chain's register: GCC 12 compiled the
// intrinsics' steps with two register copies around every vpdpbusd (and the maddubs loops with
// spills to the stack). An Ice Lake Xeon issues those copies on the dot's own ports: the probe read
// 0.72x the rate of a copy-free loop there (session 38's Zen 5 about 0.65x), so every "% of the
// peak" read high by 1.4-1.5x (docs/bench/cpu.md, "The dot-peak probe on Intel cores; tiles of two
// row groups (session 56)"). (An array of accumulators was kept in memory by GCC, a store and a load
// around every instruction, and the probe read well under the real peak.)
#define ALAP_DOT12(STEP)                                                                              \
  STEP(c0) STEP(c1) STEP(c2) STEP(c3) STEP(c4) STEP(c5) STEP(c6) STEP(c7) STEP(c8) STEP(c9) STEP(c10) \
  STEP(c11)
// The 16-register ISAs (VEX encodings) keep 8 chains, so that nothing spills.
#define ALAP_DOT8(STEP) STEP(c0) STEP(c1) STEP(c2) STEP(c3) STEP(c4) STEP(c5) STEP(c6) STEP(c7)
constexpr int kChains512 = 12, kChainsVex = 8;

__attribute__((target("avx2,avx512f,avx512vnni"))) int32_t dot_loop_512(uint64_t iters) {
  __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2), c3 = _mm512_set1_epi32(3),
          c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5), c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7),
          c8 = _mm512_set1_epi32(8), c9 = _mm512_set1_epi32(9), c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11);
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (uint64_t k = 0; k < iters; ++k) {
#define ALAP_STEP(c) __asm__("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(a), "v"(b));
    ALAP_DOT12(ALAP_STEP)
#undef ALAP_STEP
    __asm__ volatile("" : "+v"(a), "+v"(b));  // the operands stay unknown to the compiler
  }
  __m512i s = c0;
#define ALAP_STEP(c) s = _mm512_add_epi32(s, c);
  ALAP_DOT12(ALAP_STEP)
#undef ALAP_STEP
  alignas(64) int32_t o[16];
  _mm512_store_si512(o, s);
  return o[0];
}

__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) int32_t dot_loop_256_evex(uint64_t iters) {
  __m256i c0 = _mm256_set1_epi32(0), c1 = _mm256_set1_epi32(1), c2 = _mm256_set1_epi32(2), c3 = _mm256_set1_epi32(3),
          c4 = _mm256_set1_epi32(4), c5 = _mm256_set1_epi32(5), c6 = _mm256_set1_epi32(6), c7 = _mm256_set1_epi32(7),
          c8 = _mm256_set1_epi32(8), c9 = _mm256_set1_epi32(9), c10 = _mm256_set1_epi32(10), c11 = _mm256_set1_epi32(11);
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  for (uint64_t k = 0; k < iters; ++k) {
#define ALAP_STEP(c) __asm__("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(a), "v"(b));
    ALAP_DOT12(ALAP_STEP)
#undef ALAP_STEP
    __asm__ volatile("" : "+v"(a), "+v"(b));
  }
  __m256i s = c0;
#define ALAP_STEP(c) s = _mm256_add_epi32(s, c);
  ALAP_DOT12(ALAP_STEP)
#undef ALAP_STEP
  return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx2,avxvnni"))) int32_t dot_loop_256_vex(uint64_t iters) {
  __m256i c0 = _mm256_set1_epi32(0), c1 = _mm256_set1_epi32(1), c2 = _mm256_set1_epi32(2), c3 = _mm256_set1_epi32(3),
          c4 = _mm256_set1_epi32(4), c5 = _mm256_set1_epi32(5), c6 = _mm256_set1_epi32(6), c7 = _mm256_set1_epi32(7);
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
  for (uint64_t k = 0; k < iters; ++k) {
#define ALAP_STEP(c) __asm__("%{vex%} vpdpbusd %2, %1, %0" : "+x"(c) : "x"(a), "x"(b));
    ALAP_DOT8(ALAP_STEP)
#undef ALAP_STEP
    __asm__ volatile("" : "+x"(a), "+x"(b));
  }
  __m256i s = c0;
#define ALAP_STEP(c) s = _mm256_add_epi32(s, c);
  ALAP_DOT8(ALAP_STEP)
#undef ALAP_STEP
  return _mm256_extract_epi32(s, 0);
}

// maddubs + madd chains, 8 as in the VEX loop: plain AVX2's per 32 bytes, the sse4 variant's per 16.
// A step: t = maddubs(a, b), t = madd(t, one), c += t, in one asm (a temporary a chain).
#define ALAP_MADDUBS_STEP(chain, STEP_ASM)                                                          \
  {                                                                                                \
    decltype(chain) t;                                                                             \
    __asm__(STEP_ASM : [c] "+x"(chain), [t] "=&x"(t) : [a] "x"(a), [b] "x"(b), [one] "x"(one)); \
  }
#define ALAP_MADDUBS_SUM(c, ADD) s = ADD(s, c);
#define ALAP_MADDUBS_LOOP(NAME, TARGET, V, OPS, STEP_ASM)                                                \
  __attribute__((target(TARGET))) int32_t NAME(uint64_t iters) {                                        \
    V c0 = OPS##_set1_epi32(0), c1 = OPS##_set1_epi32(1), c2 = OPS##_set1_epi32(2), c3 = OPS##_set1_epi32(3), \
      c4 = OPS##_set1_epi32(4), c5 = OPS##_set1_epi32(5), c6 = OPS##_set1_epi32(6), c7 = OPS##_set1_epi32(7); \
    V a = OPS##_set1_epi8(3), b = OPS##_set1_epi8(-2), one = OPS##_set1_epi16(1);                         \
    for (uint64_t k = 0; k < iters; ++k) {                                                               \
      ALAP_DOT8_OP(ALAP_MADDUBS_STEP, STEP_ASM)                                                          \
      __asm__ volatile("" : "+x"(a), "+x"(b));                                                           \
    }                                                                                                    \
    V s = c0;                                                                                            \
    ALAP_DOT8_OP(ALAP_MADDUBS_SUM, OPS##_add_epi32)                                                      \
    return OPS##_extract_epi32(s, 0);                                                                    \
  }
#define ALAP_DOT8_OP(STEP, X) \
  STEP(c0, X) STEP(c1, X) STEP(c2, X) STEP(c3, X) STEP(c4, X) STEP(c5, X) STEP(c6, X) STEP(c7, X)
ALAP_MADDUBS_LOOP(dot_loop_avx2, "avx2", __m256i, _mm256,
                  "vpmaddubsw %[b], %[a], %[t]\n\tvpmaddwd %[one], %[t], %[t]\n\tvpaddd %[t], %[c], %[c]")
ALAP_MADDUBS_LOOP(dot_loop_sse4, "ssse3,sse4.1", __m128i, _mm,
                  "movdqa %[a], %[t]\n\tpmaddubsw %[b], %[t]\n\tpmaddwd %[one], %[t]\n\tpaddd %[t], %[c]")
#undef ALAP_MADDUBS_LOOP
#undef ALAP_MADDUBS_SUM
#undef ALAP_MADDUBS_STEP
#undef ALAP_DOT8_OP

// f32 FMAs, the plain-weight (f32, f16, bf16) products' instruction: 12 chains (the FMA latency
// times the FMA pipes a core has, with room), the same register discipline as the dot loops. One
// body for both widths.
#define ALAP_FMA12(STEP, OP)                                                                                 \
  STEP(c0, OP) STEP(c1, OP) STEP(c2, OP) STEP(c3, OP) STEP(c4, OP) STEP(c5, OP) STEP(c6, OP) STEP(c7, OP) \
  STEP(c8, OP) STEP(c9, OP) STEP(c10, OP) STEP(c11, OP)
#define ALAP_FMA_STEP(c, FMADD) __asm__ volatile("" : "+v"(a)); c = FMADD(c, a, b);
#define ALAP_FMA_SUM(c, ADD) s = ADD(s, c);
#define ALAP_FMA_LOOP(NAME, TARGET, V, SET1, FMADD, ADD)                                                  \
  __attribute__((target(TARGET))) int32_t NAME(uint64_t iters) {                                          \
    V c0 = SET1(0), c1 = SET1(1), c2 = SET1(2), c3 = SET1(3), c4 = SET1(4), c5 = SET1(5), c6 = SET1(6),     \
      c7 = SET1(7), c8 = SET1(8), c9 = SET1(9), c10 = SET1(10), c11 = SET1(11);                             \
    V a = SET1(0.999f), b = SET1(1e-3f);                                                                   \
    for (uint64_t k = 0; k < iters; ++k) {                                                                 \
      ALAP_FMA12(ALAP_FMA_STEP, FMADD)                                                                     \
      __asm__ volatile("" : "+v"(a), "+v"(b));                                                             \
    }                                                                                                      \
    V s = c0;                                                                                              \
    ALAP_FMA12(ALAP_FMA_SUM, ADD)                                                                          \
    float o[sizeof(V) / sizeof(float)];                                                                    \
    std::memcpy(o, &s, sizeof s);                                                                          \
    return static_cast<int32_t>(o[0]);                                                                     \
  }
ALAP_FMA_LOOP(fma_loop_512, "avx2,fma,avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
ALAP_FMA_LOOP(fma_loop_256, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
#undef ALAP_FMA_LOOP
#undef ALAP_FMA_SUM
#undef ALAP_FMA_STEP
#undef ALAP_FMA12
#undef ALAP_DOT12
#undef ALAP_DOT8

// AMX's bf16 tile product (TDPBF16PS, 16 × 16 f32 sums of rows of 32 bf16: 8192 multiply-adds an
// instruction), four independent accumulator tiles, the operands zero and no loads: the tile
// unit's own peak. The prefill products load an operand tile a product (each 1 KB
// from L1 or L2), which this machine's tile unit does not overlap with the products: their ceiling
// is about 0.55 of it (docs/bench/cpu.md, "Prefill on the AMX tiles in bf16 (session 52)"). Runs
// only where cpu_features().amx_bf16 (the process may use the tiles).
struct alignas(64) AmxPeakConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
int32_t amx_loop(uint64_t iters) {
  static const AmxPeakConfig config;
  alignas(64) static const uint16_t zeros[16 * 32] = {};
  alignas(64) float out[16 * 16];
  __asm__ volatile("ldtilecfg %0" : : "m"(config));
  __asm__ volatile(
      "tilezero %%tmm0\n\ttilezero %%tmm1\n\ttilezero %%tmm2\n\ttilezero %%tmm3\n\t"
      "tileloadd (%0,%1,1), %%tmm4\n\ttileloadd (%0,%1,1), %%tmm5\n\t"
      "tileloadd (%0,%1,1), %%tmm6\n\ttileloadd (%0,%1,1), %%tmm7"
      :
      : "r"(zeros), "r"(size_t{64})
      : "memory");
  for (uint64_t k = 0; k < iters; ++k) {
    __asm__ volatile(
        "tdpbf16ps %%tmm6, %%tmm4, %%tmm0\n\ttdpbf16ps %%tmm7, %%tmm4, %%tmm1\n\t"
        "tdpbf16ps %%tmm6, %%tmm5, %%tmm2\n\ttdpbf16ps %%tmm7, %%tmm5, %%tmm3" ::);
  }
  __asm__ volatile("tilestored %%tmm0, (%0,%1,1)\n\ttilerelease" : : "r"(out), "r"(size_t{64}) : "memory");
  return static_cast<int32_t>(out[0]);
}

// The best rate of loop (each call's iteration does ops_per_iter multiply-adds on each thread) over
// three runs of about `seconds` on n_threads threads at once, in G multiply-adds a second.
double time_loop(int32_t (*loop)(uint64_t), double ops_per_iter, size_t n_threads, double seconds) {
  // Calibrate the iteration count on one thread, then time all threads together.
  uint64_t iters = 1 << 16;
  volatile uint32_t sink = 0;  // unsigned: the sums wrap, which is all a sink needs
  for (;;) {
    const auto t0 = Clock::now();
    sink = sink + static_cast<uint32_t>(loop(iters));
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > seconds / 4 || iters > (uint64_t{1} << 40)) {
      iters = static_cast<uint64_t>(static_cast<double>(iters) * seconds / std::max(s, 1e-6));
      break;
    }
    iters *= 4;
  }
  double best = 0;
  for (int r = 0; r < 3; ++r) {
    const double s = run_threads(n_threads, [&](size_t) { sink = sink + static_cast<uint32_t>(loop(iters)); });
    best = std::max(best, static_cast<double>(iters) * ops_per_iter * static_cast<double>(n_threads) / s / 1e9);
  }
  return best;
}

}  // namespace

ReadProbe::ReadProbe(size_t n_threads, size_t bytes) : n_threads_(threads_or_all(n_threads)) {
  bytes_ = std::max<size_t>(bytes / (128 * n_threads_) * (128 * n_threads_), 128 * n_threads_);
  // On huge pages always: the probe reads at the best rate this machine gives a stream, as the
  // engine's packed weights and KV cache do (alap/kernels/huge_pages.h).
  buf_ = static_cast<uint8_t*>(alloc_streamed(bytes_, true));
  if (buf_ == nullptr) throw std::bad_alloc();
  const size_t slice = bytes_ / n_threads_;
  // First touch by the thread that reads the slice (NUMA-friendly), with non-zero bytes.
  run_threads(n_threads_, [&](size_t t) { std::memset(buf_ + t * slice, static_cast<int>(t + 1), slice); });
}

ReadProbe::~ReadProbe() {
  volatile unsigned long long keep = sink_;
  (void)keep;
  std::free(buf_);
}

unsigned long long ReadProbe::read_slice(size_t t) const {
  const size_t slice = bytes_ / n_threads_;
  if (t >= n_threads_) return 0;
  return cpu_features().avx2_set() ? read_sum_avx2(buf_ + t * slice, slice) : read_sum_scalar(buf_ + t * slice, slice);
}

double ReadProbe::pass() {
  std::vector<uint64_t> sink(n_threads_);
  const double s = run_threads(n_threads_, [&](size_t t) { sink[t] = read_slice(t); });
  for (uint64_t v : sink) sink_ += v;
  return static_cast<double>(bytes_) / s / 1e9;
}

BandwidthProbe measure_read_bandwidth(size_t n_threads, size_t bytes, int repeats) {
  ReadProbe probe(n_threads, bytes);
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) best = std::max(best, probe.pass());
  return BandwidthProbe{best, probe.bytes(), probe.n_threads()};
}

DotPeakProbe measure_int8_dot_peak(size_t n_threads, size_t lanes, double seconds) {
  n_threads = threads_or_all(n_threads);
  const bool has512 = cpu_features().avx512vnni_set();
  const bool hasvex = cpu_features().avxvnni_set();
  DotPeakProbe p;
  p.n_threads = n_threads;
  int32_t (*loop)(uint64_t) = nullptr;
  int chains = 0;
  // The 256-bit form is the active variant's own where it names one: a plain-AVX2 or AVX-VNNI
  // variant chosen on an AVX-512 CPU (set_cpu_variant, ALAP_CPU_VARIANT) is measured against the
  // dot it runs, not the EVEX vpdpbusd it never issues (maddubs + madd ran at about half that
  // rate on Zen 5).
  const char* variant = cpu_variant_name();
  const bool plain = std::strcmp(variant, "avx2") == 0, vex = std::strcmp(variant, "avxvnni") == 0;
  const bool sse4 = std::strcmp(variant, "sse4") == 0;
  if (has512 && lanes != 32) {
    loop = dot_loop_512, p.lanes = 64, p.isa = "avx512vnni-512", chains = kChains512;
  } else if (sse4 && cpu_features().sse4_set()) {  // the 128-bit variant (lanes 32: its own form)
    loop = dot_loop_sse4, p.lanes = 16, p.isa = "sse4", chains = kChainsVex;
  } else if (has512 && !plain && !vex) {
    loop = dot_loop_256_evex, p.lanes = 32, p.isa = "avx512vnni-256", chains = kChains512;
  } else if (hasvex && !plain) {
    loop = dot_loop_256_vex, p.lanes = 32, p.isa = "avxvnni", chains = kChainsVex;
  } else if (cpu_features().avx2_set()) {
    loop = dot_loop_avx2, p.lanes = 32, p.isa = "avx2", chains = kChainsVex;
  } else {
    return p;
  }
  p.gmacs = time_loop(loop, static_cast<double>(chains) * static_cast<double>(p.lanes), n_threads, seconds);
  return p;
}

DotPeakProbe measure_f32_fma_peak(size_t n_threads, double seconds) {
  DotPeakProbe p;
  p.n_threads = threads_or_all(n_threads);
  // The AVX-512 variant's plain products are 512-bit FMAs; the 256-bit variants' are 256-bit.
  if (std::strcmp(cpu_variant_name(), "avx512vnni") == 0 && cpu_features().avx512vnni_set()) {
    p.lanes = 16, p.isa = "fma-512";
    p.gmacs = time_loop(fma_loop_512, 12.0 * 16, p.n_threads, seconds);
  } else if (std::strcmp(cpu_variant_name(), "scalar") != 0 && std::strcmp(cpu_variant_name(), "sse4") != 0 &&
             cpu_features().avx2_set()) {
    p.lanes = 8, p.isa = "fma-256";
    p.gmacs = time_loop(fma_loop_256, 12.0 * 8, p.n_threads, seconds);
  }
  return p;
}

DotPeakProbe measure_amx_peak(size_t n_threads, double seconds) {
  DotPeakProbe p;
  p.n_threads = threads_or_all(n_threads);
  if (cpu_features().amx_bf16) {
    p.lanes = 32, p.isa = "amx-bf16";
    p.gmacs = time_loop(amx_loop, 4.0 * 16 * 16 * 32, p.n_threads, seconds);
  }
  return p;
}

}  // namespace alap::kernels
