// Tests of the row-interleaved weights (pack_weights / WeightView::packed): products on the packed
// form against the scalar oracle on random blocks of every packed type, odd token counts, row
// ranges that cut groups of 16, one block and many; one token bit-identical to the same token in
// a batch (also one long enough for token chunks and column passes); packed_bytes 0 where there
// is no packed form; the scalar variant ignoring `packed`; extreme codes and activations that
// would saturate a plain vpmaddubsw (the AVX2 path); IQ4_NL's table exact on integer inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/activation.h"
#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"
#include "quantised_acts.h"

using namespace alap::kernels;

namespace {

const DType kPacked[] = {DType::q8_0, DType::q4_0, DType::q5_0, DType::q4_1, DType::q5_1, DType::q4_k,
                          DType::q5_k, DType::q6_k, DType::q3_k, DType::q2_k, DType::iq4_xs, DType::f16,
                          DType::bf16, DType::iq4_nl};

const char* name_of(DType t) { return dtype_info(static_cast<uint32_t>(t))->name; }

// F16 / BF16: f32 activations (no int8 blocks), packed in 16-column chunks.
bool is_h16(DType t) { return t == DType::f16 || t == DType::bf16; }
// The columns a packed row is a multiple of: the type's block, 16 for F16 / BF16.
size_t unit_of(DType t) { return is_h16(t) ? 16 : dtype_info(static_cast<uint32_t>(t))->block_elems; }

// The variants with a packed form that this CPU runs.
std::vector<const char*> packed_variants() {
  std::vector<const char*> out;
  for (const char* v : {"avx512vnni", "avxvnni", "avx2"}) {
    if (set_cpu_variant(v)) out.push_back(v);
  }
  set_cpu_variant("best");
  return out;
}

// Whether variant v has a packed form of t: every type of kPacked on the three packed variants
// (Q3_K on avx2 and avxvnni too since session 6; Q2_K on all three since session 6), none on scalar.
bool has_packed(const char* v, DType) {
  const std::string s(v);
  return s == "avx512vnni" || s == "avxvnni" || s == "avx2";
}

// The variants of `all` that have a packed form of t.
std::vector<const char*> variants_for(const std::vector<const char*>& all, DType t) {
  std::vector<const char*> out;
  for (const char* v : all) {
    if (has_packed(v, t)) out.push_back(v);
  }
  return out;
}

// Restores the dispatcher's choices when a test ends, whatever it forced.
struct VariantGuard {
  ~VariantGuard() {
    set_cpu_variant("best");
    set_light_read_ahead(ReadAhead::automatic);
    set_amx_prefill(true);
    set_pair_tiles(true);
  }
};

struct Matrix {
  DType type;
  size_t n_rows, n_cols, row_bytes;
  std::vector<uint8_t> w, pk;
  std::vector<float> wf;  // dequantised
  WeightView plain() const { return WeightView{type, w.data(), n_rows, n_cols}; }
  WeightView packed() const { return WeightView{type, w.data(), n_rows, n_cols, pk.data()}; }
};

// Random bytes in every field (all quant codes, 6-bit scales and mins with their high bits, signed
// Q6_K scales, Q8_0's −128), then the fp16 scales set to small positive values.
Matrix random_matrix(DType t, size_t n_rows, size_t n_cols, uint32_t seed) {
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  Matrix m{t, n_rows, n_cols, dtype_row_bytes(info, n_cols), {}, {}, {}};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.0005f, 0.004f);
  m.w.resize(n_rows * m.row_bytes);
  for (auto& b : m.w) b = static_cast<uint8_t>(byte(rng));
  if (is_h16(t)) {  // normal values (random bytes would hold NaNs and infinities)
    std::normal_distribution<float> nd(0.0f, 0.05f);
    for (size_t i = 0; i < n_rows * n_cols; ++i) {
      const float v = nd(rng);
      const uint16_t h = t == DType::f16 ? f32_to_fp16(v) : f32_to_bf16(v);
      std::memcpy(m.w.data() + 2 * i, &h, 2);
    }
  }
  auto set_f16 = [&](uint8_t* p) {
    const uint16_t h = f32_to_fp16(scale(rng));
    std::memcpy(p, &h, 2);
  };
  for (size_t blk = 0; !is_h16(t) && blk < m.w.size() / info.block_bytes; ++blk) {
    uint8_t* p = m.w.data() + blk * info.block_bytes;
    switch (t) {
      case DType::q4_k:
      case DType::q5_k:
        set_f16(p), set_f16(p + 2);
        break;
      case DType::q6_k:
        set_f16(p + 208);
        break;
      case DType::q3_k:
        set_f16(p + 108);
        break;
      case DType::q2_k:
        set_f16(p + 80), set_f16(p + 82);
        break;
      case DType::q4_1:
      case DType::q5_1:  // d, then the min m: negative, as a file's usually is (−8·d or so)
        set_f16(p);
        set_f16(p + 2);
        p[3] |= 0x80;
        break;
      default:
        set_f16(p);
        break;
    }
  }
  m.wf.resize(n_rows * n_cols);
  for (size_t r = 0; r < n_rows; ++r) dequantize_row(t, m.w.data() + r * m.row_bytes, m.wf.data() + r * n_cols, n_cols);
  return m;
}

bool pack(Matrix& m) {
  const size_t n = packed_bytes(m.plain());
  if (n == 0) return false;
  EXPECT_EQ(n, m.n_rows * m.row_bytes) << name_of(m.type) << ": the packed form keeps the original size";
  m.pk.assign(n, 0xEE);
  pack_weights(m.plain(), m.pk.data());
  return true;
}

std::vector<float> random_x(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng) + 0.1f;
  x[0] = 4.0f;  // an outlier, as activations have
  return x;
}

using test::Acts;
using test::quantise;

QuantizedActs token_view(const std::vector<float>& x, const Acts& a, size_t tok, size_t n_tok, size_t n_cols) {
  return QuantizedActs{x.data() + tok * n_cols,
                       a.q.data() + tok * n_cols,
                       a.d.data() + tok * n_cols / 32,
                       a.s.data() + tok * n_cols / 32,
                       a.s4.data() + tok * n_cols / 4,
                       n_tok,
                       n_cols};
}

// Tokens [tok, tok + nt) as the products take them: a's int8 blocks, or for F16 / BF16 the f32
// activations alone (as the forward pass gives them).
QuantizedActs acts_for(DType t, const std::vector<float>& x, const Acts& a, size_t tok, size_t nt, size_t n_cols) {
  if (is_h16(t)) return QuantizedActs{x.data() + tok * n_cols, nullptr, nullptr, nullptr, nullptr, nt, n_cols};
  return token_view(x, a, tok, nt, n_cols);
}

// The tolerance of matmul_test: f32 rounding plus quantising x to int8 blocks of 32, or of 256
// where the active variant's product on m's packed form reads those (reads_acts_256).
double tolerance(const Matrix& m, const float* x, size_t r) {
  const size_t blk = reads_acts_256(m.packed()) ? 256 : 32;
  double mag = 0, actq = 0;
  for (size_t b = 0; b < m.n_cols; b += blk) {
    double amax = 0;
    for (size_t c = b; c < std::min(b + blk, m.n_cols); ++c) amax = std::max(amax, double(std::fabs(x[c])));
    for (size_t c = b; c < std::min(b + blk, m.n_cols); ++c) {
      const double aw = std::fabs(double(m.wf[r * m.n_cols + c]));
      mag += aw * std::fabs(double(x[c]));
      if (!is_h16(m.type)) actq += aw * amax / 127.0 / 2.0;
    }
  }
  return 2e-5 * mag + 1.05 * actq + 1e-6;
}

// Every row of got ([n_tok][ldy]) outside [rb, re) still holds the sentinel −777; inside, wrong(tok,
// r, value) gives an empty string for a right value, else what is wrong. Stops at the first failure.
template <class Wrong>
::testing::AssertionResult rows_written(const std::vector<float>& got, size_t n_tok, size_t ldy, size_t rb, size_t re,
                                        Wrong wrong) {
  for (size_t tok = 0; tok < n_tok; ++tok) {
    for (size_t r = 0; r < ldy; ++r) {
      const float g = got[tok * ldy + r];
      if (r < rb || r >= re) {
        if (g != -777.0f) return ::testing::AssertionFailure() << "wrote outside the rows, t " << tok << " r " << r;
      } else if (const std::string w = wrong(tok, r, g); !w.empty()) {
        return ::testing::AssertionFailure() << w << ", t " << tok << " r " << r;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Packed, BytesAreZeroWithoutAPackedForm) {
  VariantGuard guard;
  force_scalar_kernels(true);
  EXPECT_EQ(packed_bytes(WeightView{DType::q8_0, nullptr, 32, 64}), 0u) << "the scalar oracle has no packed form";
  std::vector<uint8_t> w(32 * 68), dst(32 * 68);
  EXPECT_THROW(pack_weights(WeightView{DType::q8_0, w.data(), 32, 64}, dst.data()), std::invalid_argument);
  EXPECT_EQ(packed_bytes(WeightView{DType::q3_k, nullptr, 32, 256}), 0u) << "nor of Q3_K";
  EXPECT_EQ(packed_bytes(WeightView{DType::q2_k, nullptr, 32, 512}), 0u) << "nor of Q2_K";
  EXPECT_EQ(packed_bytes(WeightView{DType::iq4_xs, nullptr, 32, 512}), 0u) << "nor of IQ4_XS";
  force_scalar_kernels(false);
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "this CPU has no AVX2 (no packed form at all)";
  for (const char* v : variants) {
    set_cpu_variant(v);
    EXPECT_EQ(packed_bytes(WeightView{DType::q8_0, nullptr, 32, 64}), 32u * 68u) << v;
    EXPECT_EQ(packed_bytes(WeightView{DType::q4_k, nullptr, 16, 512}), 16u * 288u) << v;
    EXPECT_EQ(packed_bytes(WeightView{DType::q8_0, nullptr, 24, 64}), 0u) << v << ": rows not a multiple of 16";
    EXPECT_EQ(packed_bytes(WeightView{DType::q8_0, nullptr, 32, 48}), 0u)
        << v << ": columns not a multiple of the block";
    EXPECT_EQ(packed_bytes(WeightView{DType::q8_1, nullptr, 32, 64}), 0u) << v << ": a type without a layout";
    EXPECT_EQ(packed_bytes(WeightView{DType::q4_1, nullptr, 32, 64}), 32u * 40u) << v << ": Q4_1 since session 25";
    EXPECT_EQ(packed_bytes(WeightView{DType::q5_1, nullptr, 32, 64}), 32u * 48u) << v << ": Q5_1 since session 25";
    EXPECT_EQ(packed_bytes(WeightView{DType::q3_k, nullptr, 32, 256}), 32u * 110u)
        << v << ": every packed variant multiplies Q3_K's layout (avx2 and avxvnni since session 6)";
    EXPECT_EQ(packed_bytes(WeightView{DType::q2_k, nullptr, 32, 512}), 2u * 2u * 16u * 84u)
        << v << ": Q2_K packs to 16 x 84 bytes a super-block per 16 rows (session 6)";
    EXPECT_EQ(packed_bytes(WeightView{DType::q2_k, nullptr, 40, 256}), 0u) << v << ": Q2_K rows not a multiple of 16";
    EXPECT_EQ(packed_bytes(WeightView{DType::iq4_xs, nullptr, 32, 512}), 2u * 2u * 16u * 136u)
        << v << ": IQ4_XS packs to 16 x 136 bytes a super-block per 16 rows";
    EXPECT_EQ(packed_bytes(WeightView{DType::iq4_xs, nullptr, 40, 256}), 0u)
        << v << ": IQ4_XS rows not a multiple of 16";
    EXPECT_EQ(packed_bytes(WeightView{DType::f16, nullptr, 32, 64}), 32u * 128u) << v << ": F16 since session 26";
    EXPECT_EQ(packed_bytes(WeightView{DType::bf16, nullptr, 32, 48}), 32u * 96u) << v << ": BF16 too";
    EXPECT_EQ(packed_bytes(WeightView{DType::f16, nullptr, 32, 40}), 0u) << v << ": F16 columns not a multiple of 16";
    EXPECT_EQ(packed_bytes(WeightView{DType::f32, nullptr, 32, 64}), 0u) << v << ": F32 has no packed form";
    EXPECT_EQ(packed_bytes(WeightView{DType::iq4_nl, nullptr, 32, 64}), 32u * 36u) << v << ": IQ4_NL as Q4_0";
    EXPECT_EQ(packed_bytes(WeightView{DType::iq4_nl, nullptr, 32, 48}), 0u) << v << ": IQ4_NL's blocks of 32";
    EXPECT_EQ(packed_bytes(WeightView{DType::iq4_xs, nullptr, 32, 288}), 0u) << v << ": IQ4_XS's blocks of 256";
    EXPECT_THROW(pack_weights(WeightView{DType::q8_1, w.data(), 32, 64}, dst.data()), std::invalid_argument) << v;
  }
}

// Every packed type: one block, a few, many (odd counts); 1 to 13 tokens; row ranges whole, cut
// inside groups and a single row; against the scalar oracle; nothing written outside the rows.
TEST(Packed, MatchesScalarOracle) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 48;
  const std::vector<std::pair<size_t, size_t>> ranges = {{0, 48}, {5, 37}, {17, 18}, {16, 32}};
  for (DType t : kPacked) {
    const auto vs = variants_for(variants, t);
    if (vs.empty()) continue;
    const size_t block = unit_of(t);
    for (size_t n_blocks : {size_t{1}, size_t{3}, block == 256 ? size_t{9} : size_t{37}}) {
      const size_t n_cols = block * n_blocks;
      Matrix m = random_matrix(t, n_rows, n_cols, 40 + static_cast<uint32_t>(t) + static_cast<uint32_t>(n_blocks));
      set_cpu_variant(vs[0]);
      ASSERT_TRUE(pack(m)) << name_of(t);
      for (size_t n_tok : {size_t{1}, size_t{3}, size_t{4}, size_t{8}, size_t{13}}) {
        const std::vector<float> x = random_x(n_tok * n_cols, 7 + static_cast<uint32_t>(n_tok));
        const size_t ldy = n_rows + 5;
        std::vector<float> want(n_tok * ldy);
        force_scalar_kernels(true);
        matmul(m.plain(), x.data(), n_tok, want.data(), ldy, 0, n_rows);
        for (const char* v : vs) {
          set_cpu_variant(v);
          for (const auto& [rb, re] : ranges) {
            std::vector<float> got(n_tok * ldy, -777.0f);
            matmul(m.packed(), x.data(), n_tok, got.data(), ldy, rb, re);
            const std::string what = std::string(v) + " " + name_of(t) + " cols " + std::to_string(n_cols) + " n_tok " +
                                     std::to_string(n_tok) + " rows " + std::to_string(rb) + ".." + std::to_string(re);
            ASSERT_TRUE(rows_written(got, n_tok, ldy, rb, re, [&](size_t tok, size_t r, float g) {
              const double w = want[tok * ldy + r], tol = tolerance(m, x.data() + tok * n_cols, r);
              return std::fabs(g - w) <= tol ? std::string() : "got " + std::to_string(g) + ", want " + std::to_string(w);
            })) << what;
          }
        }
      }
    }
  }
}

// The packed product is not a rounding of the unpacked one that could hide a wrong layout: a
// row whose packed bytes are swapped with its neighbour's gives that neighbour's result.
TEST(Packed, GroupLanesAreRows) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  for (const char* v : variants) {
    set_cpu_variant(v);
    for (DType t : kPacked) {
      if (!has_packed(v, t)) continue;
      const size_t n_cols = unit_of(t) * 2;
      Matrix m = random_matrix(t, 16, n_cols, 90 + static_cast<uint32_t>(t));
      ASSERT_TRUE(pack(m));
      Matrix s = m;  // rows 3 and 4 swapped in the source, packed again
      std::swap_ranges(s.w.begin() + 3 * m.row_bytes, s.w.begin() + 4 * m.row_bytes, s.w.begin() + 4 * m.row_bytes);
      ASSERT_TRUE(pack(s));
      const std::vector<float> x = random_x(2 * n_cols, 3);
      std::vector<float> a(2 * 16), b(2 * 16);
      matmul(m.packed(), x.data(), 2, a.data(), 16, 0, 16);
      matmul(s.packed(), x.data(), 2, b.data(), 16, 0, 16);
      for (size_t tok = 0; tok < 2; ++tok) {
        EXPECT_EQ(a[tok * 16 + 3], b[tok * 16 + 4]) << v << " " << name_of(t);
        EXPECT_EQ(a[tok * 16 + 4], b[tok * 16 + 3]) << v << " " << name_of(t);
        EXPECT_NE(a[tok * 16 + 3], a[tok * 16 + 4]) << v << " " << name_of(t);
        EXPECT_EQ(a[tok * 16 + 9], b[tok * 16 + 9]) << v << " " << name_of(t);
      }
    }
  }
}

// One token alone (decode), on row ranges that cut groups, gives the bits of the same token in a
// batch of 13 (AVX-512: tiles of 7 and 6; Q8_0 and Q4_K rows of 1024 columns or more: tiles of two
// groups and 4-5 tokens, and one group's tiles where a call's groups are odd; 256-bit: 4, 4, 4, 1),
// with the light types' read-ahead forced on and off (Q8_0, Q4_0, Q4_1 and F16 / BF16 then run their
// other decode pass), and the f32-activation overload gives the same bits too. F16 / BF16 take f32
// activations (no int8 blocks), as the forward pass gives them.
TEST(Packed, DecodeIsBitIdenticalToPrefill) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 64, n_tok = 13;
  // Calls over row ranges of one group, two (some with partial groups at the ends), three (a pair
  // and one left over) and all four: the blocks-of-32 one-token passes read two groups at a time.
  const std::vector<std::vector<size_t>> cut_sets = {{0, 5, 16, 21, 47, 64}, {0, 64}, {5, 47, 64}, {0, 5}};
  for (const char* v : variants) {
    set_cpu_variant(v);
    for (DType t : kPacked) {
      if (!has_packed(v, t)) continue;
      const size_t block = unit_of(t);
      for (size_t n_cols : {block, block * (block == 256 ? 7 : 75)}) {
        Matrix m = random_matrix(t, n_rows, n_cols, 200 + static_cast<uint32_t>(t));
        ASSERT_TRUE(pack(m));
        const std::vector<float> x = random_x(n_tok * n_cols, 21);
        const Acts a = is_h16(t) ? Acts{} : quantise(x, n_tok, n_cols);
        auto acts = [&](size_t tok, size_t nt) { return acts_for(t, x, a, tok, nt, n_cols); };
        std::vector<float> all(n_tok * n_rows), plain(n_tok * n_rows);
        matmul(m.packed(), acts(0, n_tok), all.data(), n_rows, 0, n_rows);
        matmul(m.packed(), x.data(), n_tok, plain.data(), n_rows, 0, n_rows);
        const std::string what = std::string(v) + " " + name_of(t) + " cols " + std::to_string(n_cols);
        EXPECT_EQ(all, plain) << what;
        for (ReadAhead ra : {ReadAhead::on, ReadAhead::off}) {
          set_light_read_ahead(ra);
          ASSERT_EQ(light_read_ahead(), ra == ReadAhead::on);
          for (const std::vector<size_t>& cuts : cut_sets) {
            std::vector<float> split(n_tok * n_rows, -1.0f);
            for (size_t tok = 0; tok < n_tok; ++tok) {
              for (size_t i = 0; i + 1 < cuts.size(); ++i) {
                matmul(m.packed(), acts(tok, 1), split.data() + tok * n_rows, n_rows, cuts[i], cuts[i + 1]);
              }
            }
            // Rows outside the cuts stay -1 in split: compare those rows only.
            for (size_t tok = 0; tok < n_tok; ++tok) {
              for (size_t r = cuts.front(); r < cuts.back(); ++r) {
                ASSERT_EQ(all[tok * n_rows + r], split[tok * n_rows + r])
                    << what << (ra == ReadAhead::on ? ", read-ahead on" : ", read-ahead off") << ", token " << tok
                    << ", row " << r << ", cuts from " << cuts.front() << " to " << cuts.back();
              }
              for (size_t r = 0; r < n_rows; ++r) {
                if (r < cuts.front() || r >= cuts.back()) {
                  ASSERT_EQ(split[tok * n_rows + r], -1.0f) << what << ": row " << r << " outside the call was written";
                }
              }
            }
          }
        }
        set_light_read_ahead(ReadAhead::automatic);
      }
    }
  }
}

// The AVX-512 prefill's tiles of two row groups (Q6_K, Q3_K, Q2_K from 1024 columns, the rest from
// 512; every type but Q8_0 on unpacked rows, whose one-group tiles read the packed codes in column
// passes of 32 blocks) give the bits of its one-group tiles: 80 rows (two pairs and a group left over,
// and a range that starts inside a group), 512, 544, 1024, 1056 and 1280 columns (odd block counts for
// the types of 32; 1280: two and a half of the one-group passes, the super-block types' last pass of
// 8 blocks), 5 and 23 tokens (tiles of 5; 4 of 5-6), on the VNNI tiles.
// Turning them off changes the bits of no type.
TEST(Packed, PairTilesGiveTheOneGroupBits) {
  VariantGuard guard;
  set_amx_prefill(false);
  if (!set_cpu_variant("avx512vnni")) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  const size_t n_rows = 80;
  for (DType t : kPacked) {
    if (!has_packed("avx512vnni", t) || is_h16(t)) continue;
    for (size_t n_cols : {size_t{512}, size_t{544}, size_t{1024}, size_t{1056}, size_t{1280}}) {
      if (n_cols % unit_of(t) != 0) continue;
      Matrix m = random_matrix(t, n_rows, n_cols, 300 + static_cast<uint32_t>(t));
      ASSERT_TRUE(pack(m));
      for (size_t n_tok : {size_t{5}, size_t{23}}) {
        const std::vector<float> x = random_x(n_tok * n_cols, 41 + static_cast<uint32_t>(n_tok));
        const Acts a = quantise(x, n_tok, n_cols);
        const std::string what = std::string(name_of(t)) + " cols " + std::to_string(n_cols) + " tokens " +
                                 std::to_string(n_tok);
        for (size_t rb : {size_t{0}, size_t{7}}) {
          std::vector<float> pairs(n_tok * n_rows, -1.0f), ones(n_tok * n_rows, -1.0f);
          set_pair_tiles(true);
          matmul(m.packed(), acts_for(t, x, a, 0, n_tok, n_cols), pairs.data(), n_rows, rb, n_rows);
          set_pair_tiles(false);
          matmul(m.packed(), acts_for(t, x, a, 0, n_tok, n_cols), ones.data(), n_rows, rb, n_rows);
          EXPECT_EQ(pairs, ones) << what << " rows from " << rb;
        }
      }
    }
  }
}

// A prefill call whose outputs pass 1 MiB (64 tokens × 4118 rows) writes its whole 64-byte lines with
// non-temporal stores where y is on 64-byte lines (the AVX-512 tiles, one column pass: 512 columns)
// and plain stores where it is not: both give each token's decode bits, the groups cut at both ends
// of the row range included, and write no row outside it.
TEST(Packed, LargeOutputsGiveTheSameBitsOnAnyAlignment) {
  VariantGuard guard;
  set_amx_prefill(false);  // the AMX prefill sums bf16 products: AmxPrefillSumsBf16Products
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 4128, n_cols = 512, n_tok = 64, rb = 5, re = n_rows - 5;
  static_assert(n_tok * (re - rb) * sizeof(float) > (size_t{1} << 20));
  std::vector<float> store(n_tok * n_rows + 64);
  float* const aligned = store.data() + (64 - reinterpret_cast<uintptr_t>(store.data()) % 64) % 64 / sizeof(float);
  for (DType t : kPacked) {
    const auto vs = variants_for(variants, t);
    if (vs.empty()) continue;
    Matrix m = random_matrix(t, n_rows, n_cols, 700 + static_cast<uint32_t>(t));
    set_cpu_variant(vs[0]);
    ASSERT_TRUE(pack(m)) << name_of(t);
    const std::vector<float> x = random_x(n_tok * n_cols, 57);
    const Acts a = is_h16(t) ? Acts{} : quantise(x, n_tok, n_cols);
    for (const char* v : vs) {
      set_cpu_variant(v);
      std::vector<float> one(n_tok * n_rows, -1.0f);
      for (size_t tok = 0; tok < n_tok; ++tok) {
        matmul(m.packed(), acts_for(t, x, a, tok, 1, n_cols), one.data() + tok * n_rows, n_rows, rb, re);
      }
      for (size_t offset : {size_t{0}, size_t{4}}) {  // floats past a 64-byte line: 0 streams, 4 cannot
        float* y = aligned + offset;
        std::fill(y, y + n_tok * n_rows, -1.0f);
        matmul(m.packed(), acts_for(t, x, a, 0, n_tok, n_cols), y, n_rows, rb, re);
        ASSERT_TRUE(std::equal(one.begin(), one.end(), y))
            << v << " " << name_of(t) << ", y " << offset * sizeof(float) << " bytes past a line";
      }
    }
  }
}

// Automatic read-ahead is off on AMD Zen (family 17h or later) and on elsewhere, read against the
// kernel's own account of cpuid in /proc/cpuinfo.
TEST(Packed, LightReadAheadFollowsTheVendor) {
  VariantGuard guard;
  if (std::getenv("ALAP_CPU_READ_AHEAD") != nullptr) GTEST_SKIP() << "ALAP_CPU_READ_AHEAD overrides the choice";
  std::ifstream in("/proc/cpuinfo");
  std::string line, vendor;
  int family = -1;
  while (std::getline(in, line) && (vendor.empty() || family < 0)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon + 2 > line.size()) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1), value = line.substr(colon + 2);
    if (key == "vendor_id") vendor = value;
    if (key == "cpu family") family = std::stoi(value);
  }
  if (vendor.empty() || family < 0) GTEST_SKIP() << "no x86 vendor and family in /proc/cpuinfo";
  const bool zen = (vendor == "AuthenticAMD" || vendor == "HygonGenuine") && family >= 0x17;
  set_light_read_ahead(ReadAhead::off);
  EXPECT_FALSE(light_read_ahead());
  set_light_read_ahead(ReadAhead::automatic);
  EXPECT_EQ(light_read_ahead(), !zen) << vendor << " family " << family;
}

// A batch long enough to be split into token chunks (AVX-512: 7 tiles of 8 tokens a chunk at 8704
// columns, 70 tokens: 9 tiles of 7-8; the pair tiles: 10 tiles of two groups a chunk, 12 tiles of
// 5-6), over rows of 8704 columns (the one-group tiles' prefill: 8.5 column passes of 32 blocks, the
// unpacked pair tiles' 256 + 16, whose sums continue through y): every token has the bits of its
// decode, and agrees with the scalar oracle. On the VNNI tiles: the AMX prefill has its own test below.
TEST(Packed, LongBatchMatchesDecodeAndOracle) {
  VariantGuard guard;
  set_amx_prefill(false);  // the AMX prefill sums bf16 products: AmxPrefillSumsBf16Products
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 32, n_cols = 8704, n_tok = 70;
  for (DType t : kPacked) {
    const auto vs = variants_for(variants, t);
    if (vs.empty()) continue;
    Matrix m = random_matrix(t, n_rows, n_cols, 500 + static_cast<uint32_t>(t));
    set_cpu_variant(vs[0]);
    ASSERT_TRUE(pack(m)) << name_of(t);
    const std::vector<float> x = random_x(n_tok * n_cols, 33);
    const Acts a = is_h16(t) ? Acts{} : quantise(x, n_tok, n_cols);
    std::vector<float> want(n_tok * n_rows);
    force_scalar_kernels(true);
    matmul(m.plain(), x.data(), n_tok, want.data(), n_rows, 0, n_rows);
    for (const char* v : vs) {
      set_cpu_variant(v);
      std::vector<float> batch(n_tok * n_rows), one(n_tok * n_rows);
      matmul(m.packed(), acts_for(t, x, a, 0, n_tok, n_cols), batch.data(), n_rows, 3, n_rows);
      matmul(m.packed(), acts_for(t, x, a, 0, n_tok, n_cols), batch.data(), n_rows, 0, 3);
      for (size_t tok = 0; tok < n_tok; ++tok) {
        matmul(m.packed(), acts_for(t, x, a, tok, 1, n_cols), one.data() + tok * n_rows, n_rows, 0, n_rows);
      }
      const std::string what = std::string(v) + " " + name_of(t);
      ASSERT_EQ(batch, one) << what;
      for (size_t tok = 0; tok < n_tok; ++tok) {
        for (size_t r = 0; r < n_rows; ++r) {
          ASSERT_NEAR(batch[tok * n_rows + r], want[tok * n_rows + r], tolerance(m, x.data() + tok * n_cols, r))
              << what << " t " << tok << " r " << r;
        }
      }
    }
  }
}

// Where the CPU has AMX, the AVX-512 prefill from 32 tokens on runs on its tiles in bf16: each
// result is the exact sum of bf16(w)·bf16(x) over the row (w the dequantised weight, both rounded
// to nearest even) up to f32 summing, for every packed int8 type; F16 and BF16 (from 16 tokens,
// transposed tiles, each weight and activation as two bf16 parts) lie within 5e-5 of Σ|w·x| of
// the exact w·x. Over one block, odd block counts and rows of several column passes; token counts
// of whole tiles of 16, with a short last tile and odd tile counts, and at 8192 columns over two
// chunks of tiles (a chunk is 2 MiB of bf16 activations: 8 tiles, then 1); row ranges that cut
// groups and leave an odd group count; nothing written outside them. A wrong scale on one half
// block of 16 columns, one token's tile read for another, or a part of F16's products left out
// lies far outside the bound; an f32 weight one ulp off the kernel's own at a bf16 tie moves one
// term by 2^-8 of it (the bound's second part).
TEST(Packed, AmxPrefillSumsBf16Products) {
  VariantGuard guard;
  if (!set_cpu_variant("avx512vnni")) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  set_amx_prefill(true);
  if (!amx_prefill()) GTEST_SKIP() << "no AMX-BF16 on this CPU (or ALAP_CPU_AMX=off)";
  auto bf = [](float v) { return double(bf16_to_f32(f32_to_bf16(v))); };
  const size_t n_rows = 48;
  const std::vector<std::pair<size_t, size_t>> ranges = {{0, 48}, {5, 37}, {17, 18}};
  for (DType t : kPacked) {
    const size_t block = is_h16(t) ? 32 : unit_of(t);  // F16 / BF16 take the tiles in blocks of 32
    for (size_t n_cols : {block, block * (block == 256 ? 5 : 37), size_t{8192}}) {
      Matrix m = random_matrix(t, n_rows, n_cols, 700 + static_cast<uint32_t>(t) + static_cast<uint32_t>(n_cols));
      ASSERT_TRUE(pack(m)) << name_of(t);
      std::vector<double> wb(m.wf.size());  // F16 and BF16 weights stay exact
      for (size_t i = 0; i < wb.size(); ++i) wb[i] = is_h16(t) ? double(m.wf[i]) : bf(m.wf[i]);
      for (size_t n_tok : {size_t{16}, size_t{32}, size_t{45}, size_t{70}, size_t{140}}) {
        if ((n_tok > 70 && n_cols != 8192) || (n_tok < 32 && !is_h16(t))) continue;  // F16 / BF16 from 16
        const std::vector<float> x = random_x(n_tok * n_cols, 11 + static_cast<uint32_t>(n_tok));
        const Acts a = is_h16(t) ? Acts{} : quantise(x, n_tok, n_cols);
        const QuantizedActs acts = acts_for(t, x, a, 0, n_tok, n_cols);
        const size_t ldy = n_rows + 3;
        std::vector<double> want(n_tok * n_rows), bound(n_tok * n_rows);
        for (size_t tok = 0; tok < n_tok; ++tok) {
          for (size_t r = 0; r < n_rows; ++r) {
            double sum = 0, mag = 0, top = 0;
            for (size_t c = 0; c < n_cols; ++c) {
              const double xc = is_h16(t) ? double(x[tok * n_cols + c]) : bf(x[tok * n_cols + c]);
              const double p = wb[r * n_cols + c] * xc;
              sum += p, mag += std::fabs(p), top = std::max(top, std::fabs(p));
            }
            want[tok * n_rows + r] = sum;
            // F16 / BF16: each term within ~2^-16 (the parts' products), f32 sums
            bound[tok * n_rows + r] = is_h16(t) ? 5e-5 * mag + 1e-6 : 1e-5 * mag + 4.0 * top / 256.0 + 1e-6;
          }
        }
        for (const auto& [rb, re] : ranges) {
          std::vector<float> got(n_tok * ldy, -777.0f);
          matmul(m.packed(), acts, got.data(), ldy, rb, re);
          const std::string what = std::string(name_of(t)) + " cols " + std::to_string(n_cols) + " n_tok " +
                                   std::to_string(n_tok) + " rows " + std::to_string(rb) + ".." + std::to_string(re);
          ASSERT_TRUE(rows_written(got, n_tok, ldy, rb, re, [&](size_t tok, size_t r, float g) {
            const double w = want[tok * n_rows + r];
            return std::fabs(g - w) <= bound[tok * n_rows + r]
                       ? std::string()
                       : "got " + std::to_string(g) + ", the bf16 products' " + std::to_string(w);
          })) << what;
        }
      }
    }
  }
}

// The tiles run only under the AVX-512 variant: amx_prefill_active() follows amx_prefill() there and
// is false under every other variant, and when the tiles are refused.
TEST(Packed, AmxPrefillActiveOnlyOnTheAvx512Variant) {
  VariantGuard guard;
  for (const char* v : {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"}) {
    if (!set_cpu_variant(v)) continue;
    set_amx_prefill(true);
    EXPECT_EQ(amx_prefill_active(), std::string(v) == "avx512vnni" && amx_prefill()) << v;
    set_amx_prefill(false);
    EXPECT_FALSE(amx_prefill_active()) << v;
  }
}

// Runs fn(m, n_tok, tiles, what) for a random n_rows × n_cols matrix of every packed type (seed +
// type), packed for every packed variant, with the AMX tiles allowed and refused, for each token
// count: `tiles` whether the packed product takes the tiles for n_tok tokens, `what` the case's name.
template <class Fn>
void for_packed_cases(size_t n_rows, size_t n_cols, uint32_t seed, std::initializer_list<size_t> counts, Fn&& fn) {
  for (DType t : kPacked) {
    Matrix m = random_matrix(t, n_rows, n_cols, seed + static_cast<uint32_t>(t));
    for (const char* v : packed_variants()) {
      set_cpu_variant(v);
      ASSERT_TRUE(pack(m)) << v << " " << name_of(t);
      for (const bool amx : {true, false}) {
        set_amx_prefill(amx);
        for (size_t n_tok : counts) {
          const std::string what = std::string(v) + " " + name_of(t) + (amx ? " tiles allowed" : " tiles refused") +
                                   " n_tok " + std::to_string(n_tok);
          fn(m, n_tok, amx_prefill_active() && n_tok >= (is_h16(t) ? 16 : kAmxPrefillMinTokens), what);
        }
      }
    }
  }
}

// reads_int8_acts: false only where the AVX-512 variant's packed product takes the tiles (F16 and
// BF16 read f32 everywhere). A call given no int8 blocks gives the bits of one given them: on the
// tiles (which read x alone) and where matmul quantises them itself (fewer tokens, the tiles
// refused, the unpacked weights, other variants).
TEST(Packed, Int8BlocksOnlyWhereTheProductReadsThem) {
  VariantGuard guard;
  const size_t n_rows = 32, n_cols = 512;
  for_packed_cases(n_rows, n_cols, 90, {1, 16, 31, 32, 40}, [&](const Matrix& m, size_t n_tok, bool tiles,
                                                                 const std::string& what) {
    EXPECT_EQ(reads_int8_acts(m.packed(), n_tok), !is_h16(m.type) && !tiles) << what;
    EXPECT_EQ(reads_int8_acts(m.plain(), n_tok), !is_h16(m.type)) << what;
    if (is_h16(m.type)) return;
    const std::vector<float> x = random_x(n_tok * n_cols, 5 + static_cast<uint32_t>(n_tok));
    const Acts a = quantise(x, n_tok, n_cols);
    const QuantizedActs bare{x.data(), nullptr, nullptr, nullptr, nullptr, n_tok, n_cols};
    for (const WeightView& w : {m.packed(), m.plain()}) {
      std::vector<float> given(n_tok * n_rows, -1.0f), none(n_tok * n_rows, -2.0f);
      matmul(w, a.view(x.data(), n_tok, n_cols), given.data(), n_rows, 0, n_rows);
      matmul(w, bare, none.data(), n_rows, 0, n_rows);
      EXPECT_EQ(given, none) << what << (w.packed ? " packed" : " plain");
    }
  });
}

// `words` uint16 from a 64-byte boundary in v (the tiles' aligned loads), v grown to hold them.
uint16_t* aligned_words(std::vector<uint16_t>& v, size_t words) {
  v.assign(words + 32, 0);
  const auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + (64 - p % 64) % 64 / sizeof(uint16_t);
}

// acts_tiles_form names the AMX tiles' form exactly where the packed product takes the tiles (rows
// for the int8-code types, pairs for F16 and BF16; never for the unpacked weights). A product
// given tiles made once (make_acts_tiles, in two pieces as threads would) gives the bits of a call
// that converts x itself, for the whole batch, a view from token 16 and a row range; it reads
// them (tiles of another x give that x's product) and ignores tiles of the other form.
TEST(Packed, ActsTilesMadeOnceGiveACallsOwnBits) {
  VariantGuard guard;
  const size_t n_rows = 32, n_cols = 512;
  for_packed_cases(n_rows, n_cols, 140, {16, 31, 32, 40, 64}, [&](const Matrix& m, size_t n_tok, bool taken,
                                                                   const std::string& what) {
    const ActsTiles form = is_h16(m.type) ? ActsTiles::pairs : ActsTiles::rows;
    const ActsTiles other = is_h16(m.type) ? ActsTiles::rows : ActsTiles::pairs;
    EXPECT_EQ(acts_tiles_form(m.packed(), n_tok), taken ? form : ActsTiles::none) << what;
    EXPECT_EQ(acts_tiles_form(m.plain(), n_tok), ActsTiles::none) << what;
    if (!taken) return;
    const std::vector<float> x = random_x(n_tok * n_cols, 7 + static_cast<uint32_t>(n_tok));
    const std::vector<float> x2 = random_x(n_tok * n_cols, 70 + static_cast<uint32_t>(n_tok));
    const size_t words = acts_tiles_words(form, n_tok, n_cols);
    ASSERT_EQ(words, (form == ActsTiles::pairs ? 2 : 1) * 16 * ((n_tok + 15) / 16) * n_cols) << what;
    std::vector<uint16_t> buf, buf2, junk;
    uint16_t* tiles = aligned_words(buf, words);
    uint16_t* tiles2 = aligned_words(buf2, words);
    make_acts_tiles(form, x.data(), n_tok, n_cols, 0, 16, tiles);  // two pieces, as two threads would
    make_acts_tiles(form, x.data(), n_tok, n_cols, 16, n_tok, tiles);
    make_acts_tiles(form, x2.data(), n_tok, n_cols, 0, n_tok, tiles2);
    auto view = [&](const float* xs, size_t n, const uint16_t* tl, ActsTiles f) {
      QuantizedActs a{xs, nullptr, nullptr, nullptr, nullptr, n, n_cols};
      a.tiles = tl;
      a.tiles_lo = f == ActsTiles::pairs ? words / 2 : 0;
      a.tiles_form = f;
      return a;
    };
    auto product = [&](const QuantizedActs& a, size_t rb, size_t re) {
      std::vector<float> y(a.n_tok * n_rows, -1.0f);
      matmul(m.packed(), a, y.data(), n_rows, rb, re);
      return y;
    };
    const std::vector<float> own = product(view(x.data(), n_tok, nullptr, ActsTiles::none), 0, n_rows);
    EXPECT_EQ(product(view(x.data(), n_tok, tiles, form), 0, n_rows), own) << what;
    EXPECT_EQ(product(view(x.data(), n_tok, tiles2, form), 0, n_rows),
              product(view(x2.data(), n_tok, nullptr, ActsTiles::none), 0, n_rows))
        << what << ": the given tiles are not what the product read";
    EXPECT_EQ(product(view(x.data(), n_tok, aligned_words(junk, words), other), 0, n_rows), own)
        << what << ": tiles of the other form";
    EXPECT_EQ(product(view(x.data(), n_tok, tiles, form), 16, 32),
              product(view(x.data(), n_tok, nullptr, ActsTiles::none), 16, 32))
        << what << ": rows [16, 32)";
    if (n_tok > 16 && (!is_h16(m.type) ? n_tok - 16 >= kAmxPrefillMinTokens : n_tok - 16 >= 16)) {
      const float* x16 = x.data() + 16 * n_cols;
      EXPECT_EQ(product(view(x16, n_tok - 16, tiles + 16 * n_cols, form), 0, n_rows),
                product(view(x16, n_tok - 16, nullptr, ActsTiles::none), 0, n_rows))
          << what << ": the view from token 16";
    }
  });
}

// A variant without a packed path (the scalar oracle) reads w.data and ignores w.packed.
TEST(Packed, OtherVariantsReadTheUnpackedData) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  set_cpu_variant(variants[0]);
  Matrix m = random_matrix(DType::q4_k, 32, 512, 5);
  ASSERT_TRUE(pack(m));
  const std::vector<float> x = random_x(3 * 512, 6);
  ASSERT_TRUE(set_cpu_variant("scalar"));
  std::vector<float> a(3 * 32), b(3 * 32);
  matmul(m.plain(), x.data(), 3, a.data(), 32, 0, 32);
  matmul(m.packed(), x.data(), 3, b.data(), 32, 0, 32);
  EXPECT_EQ(a, b);
}

// The largest products each code width allows, all of one sign, in every quad: Q8_0 codes of
// +127 and −128 against activations of ±127 (a plain u8·s8 pair of q + 128 would saturate at
// 32767), and every other type's top codes against +127 runs long enough to overflow 16-bit sums
// widened too late. Each variant against the scalar oracle, 1 and 5 tokens.
TEST(Packed, ExtremeCodesDoNotSaturate) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 16;
  for (DType t : kPacked) {
    const auto vs = variants_for(variants, t);
    if (vs.empty() || is_h16(t)) continue;  // codes: not F16 / BF16
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    const size_t n_cols = info.block_elems * 2;
    Matrix m = random_matrix(t, n_rows, n_cols, 300 + static_cast<uint32_t>(t));
    // Every quant byte at its top code (rows 0..7) or, for Q8_0, rows 8..15 at −128.
    for (size_t r = 0; r < n_rows; ++r) {
      for (size_t blk = 0; blk < n_cols / info.block_elems; ++blk) {
        uint8_t* p = m.w.data() + r * m.row_bytes + blk * info.block_bytes;
        switch (t) {
          case DType::q8_0:
            std::memset(p + 2, r < 8 ? 0x7F : 0x80, 32);
            break;
          case DType::q4_0:
            std::memset(p + 2, 0xFF, 16);
            break;
          case DType::iq4_nl:  // rows 0..7: code 15 (113; as K + 128, 241), rows 8..15: code 0 (−127)
            std::memset(p + 2, r < 8 ? 0xFF : 0x00, 16);
            break;
          case DType::q5_0:
            std::memset(p + 2, 0xFF, 20);
            break;
          case DType::q4_1:
            std::memset(p + 4, 0xFF, 16);
            break;
          case DType::q5_1:
            std::memset(p + 4, 0xFF, 20);
            break;
          case DType::q4_k:
            std::memset(p + 16, 0xFF, 128);
            break;
          case DType::q5_k:
            std::memset(p + 16, 0xFF, 32 + 128);
            break;
          case DType::q6_k:
            std::memset(p, 0xFF, 128 + 64);
            break;
          case DType::q3_k:  // rows 0..7: codes 7 (q = 3), scales 31; rows 8..15: codes 0 (q = −4), scales −32
            std::memset(p, r < 8 ? 0xFF : 0x00, 96 + 12);
            break;
          case DType::q2_k:  // scales 15, mins 15; rows 0..7: codes 3, rows 8..15: codes 0 (only the min)
            std::memset(p, 0xFF, 16);
            std::memset(p + 16, r < 8 ? 0xFF : 0x00, 64);
            break;
          case DType::iq4_xs:  // rows 0..7: codes 0 (−127), rows 8..15: codes 15 (113, the top unsigned
                               // code 241 as K + 128); scales −32 (even rows) or 31 (odd rows)
            std::memset(p + 2, r % 2 == 0 ? 0x00 : 0xFF, 6);
            std::memset(p + 8, r < 8 ? 0x00 : 0xFF, 128);
            break;
          default:
            break;
        }
      }
      dequantize_row(t, m.w.data() + r * m.row_bytes, m.wf.data() + r * n_cols, n_cols);
    }
    set_cpu_variant(vs[0]);
    ASSERT_TRUE(pack(m)) << name_of(t);
    for (size_t n_tok : {size_t{1}, size_t{5}, size_t{40}}) {  // 40: the AMX tiles where there are
      std::vector<float> x(n_tok * n_cols);
      for (size_t i = 0; i < x.size(); ++i) x[i] = (t == DType::q8_0 && (i / 64) % 2 == 1) ? -1.0f : 1.0f;
      if (t == DType::q2_k) {  // tokens 1 and 3 all negative: Σx of a half block at −16·127 too
        for (size_t i = 0; i < x.size(); ++i) x[i] = (i / n_cols) % 2 == 1 ? -1.0f : 1.0f;
      }
      std::vector<float> want(n_tok * n_rows);
      force_scalar_kernels(true);
      matmul(m.plain(), x.data(), n_tok, want.data(), n_rows, 0, n_rows);
      for (const char* v : vs) {
        set_cpu_variant(v);
        std::vector<float> got(n_tok * n_rows);
        matmul(m.packed(), x.data(), n_tok, got.data(), n_rows, 0, n_rows);
        for (size_t tok = 0; tok < n_tok; ++tok) {
          for (size_t r = 0; r < n_rows; ++r) {
            ASSERT_NEAR(got[tok * n_rows + r], want[tok * n_rows + r], tolerance(m, x.data() + tok * n_cols, r))
                << v << " " << name_of(t) << " n_tok " << n_tok << " t " << tok << " r " << r;
          }
        }
      }
    }
  }
}

// IQ4_NL on inputs that every path computes exactly: codes at random, scales 0.5, 1 or 2, and
// integer activations with ±127 in every block (so their int8 blocks are the values, scale 1):
// each product is a sum of integers times powers of two below 2^24, so each variant's products on
// the file's layout and on the packed one give the scalar oracle's bits. A wrong table entry, nibble
// or offset anywhere changes them. 5 blocks (a last odd one in the pairs), 1 and 5 tokens.
TEST(Packed, Iq4NlMatchesTheOracleExactlyOnIntegers) {
  VariantGuard guard;
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  const size_t n_rows = 32, n_cols = 160;
  Matrix m = random_matrix(DType::iq4_nl, n_rows, n_cols, 77);
  std::mt19937 rng(78);
  const uint16_t scales[3] = {f32_to_fp16(0.5f), f32_to_fp16(1.0f), f32_to_fp16(2.0f)};
  for (size_t blk = 0; blk < m.w.size() / 18; ++blk) std::memcpy(m.w.data() + 18 * blk, &scales[rng() % 3], 2);
  for (size_t r = 0; r < n_rows; ++r) {
    dequantize_row(m.type, m.w.data() + r * m.row_bytes, m.wf.data() + r * n_cols, n_cols);
  }
  std::uniform_int_distribution<int> xi(-126, 126);
  for (size_t n_tok : {size_t{1}, size_t{5}}) {
    std::vector<float> x(n_tok * n_cols);
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t b = i / 32;  // block b's extreme at position b mod 32, its sign alternating
      x[i] = static_cast<float>(i % 32 == b % 32 ? (b % 2 ? 127 : -127) : xi(rng));
    }
    std::vector<float> want(n_tok * n_rows);
    force_scalar_kernels(true);
    matmul(m.plain(), x.data(), n_tok, want.data(), n_rows, 0, n_rows);
    for (const char* v : variants) {
      set_cpu_variant(v);
      ASSERT_TRUE(pack(m)) << v;
      std::vector<float> plain(n_tok * n_rows), packed(n_tok * n_rows);
      matmul(m.plain(), x.data(), n_tok, plain.data(), n_rows, 0, n_rows);
      matmul(m.packed(), x.data(), n_tok, packed.data(), n_rows, 0, n_rows);
      EXPECT_EQ(plain, want) << v << " file layout, n_tok " << n_tok;
      EXPECT_EQ(packed, want) << v << " packed, n_tok " << n_tok;
    }
  }
}

// Blocks of 256 are read exactly where the plain AVX2 products of packed Q2_K / Q3_K / Q4_K / Q5_K /
// Q6_K / IQ4_XS run: not for other types, the file's layout, the scalar oracle or the VNNI variants (which
// keep their blocks of 32).
TEST(Packed, ActsOf256OnlyForPlainAvx2KQuants) {
  VariantGuard guard;
  for (DType t : kPacked) {
    Matrix m = random_matrix(t, 16, 512, 40 + static_cast<uint32_t>(t));
    for (const char* v : packed_variants()) {
      set_cpu_variant(v);
      ASSERT_TRUE(pack(m)) << v << " " << name_of(t);
      const bool k = t == DType::q2_k || t == DType::q3_k || t == DType::q4_k || t == DType::q5_k ||
                     t == DType::q6_k || t == DType::iq4_xs;
      EXPECT_EQ(reads_acts_256(m.packed()), k && std::string(v) == "avx2") << v << " " << name_of(t);
      EXPECT_FALSE(reads_acts_256(m.plain())) << v << " " << name_of(t);
    }
    set_cpu_variant("scalar");
    EXPECT_FALSE(reads_acts_256(m.packed())) << name_of(t);
  }
}

// The blocks of 256 a caller gives (as the forward pass does, once for a group) and those matmul
// quantises itself give the same bits; the tokens are independent of their batch.
TEST(Packed, GivenActsOf256MatchTheOnesMatmulMakes) {
  VariantGuard guard;
  if (!set_cpu_variant("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  const size_t n_tok = 5, n_cols = 768, n_rows = 32;
  for (DType t : {DType::q2_k, DType::q3_k, DType::q4_k, DType::q5_k, DType::q6_k, DType::iq4_xs}) {
    Matrix m = random_matrix(t, n_rows, n_cols, 70 + static_cast<uint32_t>(t));
    ASSERT_TRUE(pack(m)) << name_of(t);
    ASSERT_TRUE(reads_acts_256(m.packed())) << name_of(t);
    std::mt19937 rng(3);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(n_tok * n_cols);
    for (auto& v : x) v = nd(rng);
    const Acts a = quantise(x, n_tok, n_cols);
    std::vector<int8_t> q256(n_tok * n_cols);
    std::vector<float> d256(n_tok * n_cols / 256);
    quantize_activations_256(x.data(), n_tok, n_cols, q256.data(), d256.data());
    QuantizedActs given = a.view(x.data(), n_tok, n_cols);
    given.q256 = q256.data();
    given.d256 = d256.data();
    std::vector<float> with(n_tok * n_rows), made(n_tok * n_rows), one(n_tok * n_rows);
    matmul(m.packed(), given, with.data(), n_rows, 0, n_rows);
    matmul(m.packed(), a.view(x.data(), n_tok, n_cols), made.data(), n_rows, 0, n_rows);
    for (size_t tok = 0; tok < n_tok; ++tok) {
      QuantizedActs sub = token_view(x, a, tok, 1, n_cols);
      sub.q256 = q256.data() + tok * n_cols;
      sub.d256 = d256.data() + tok * n_cols / 256;
      matmul(m.packed(), sub, one.data() + tok * n_rows, n_rows, 0, n_rows);
    }
    EXPECT_EQ(with, made) << name_of(t);
    EXPECT_EQ(with, one) << name_of(t);
  }
}

// matmul_swiglu gives the bits of its two products and silu_mul on every packed type and variant:
// one token and prompts, row ranges that cut groups of 16, rows of one unpacked pass and of two
// (8704 columns), outputs on 64-byte lines and not, a prompt whose outputs pass 1 MiB (streamed).
// Where the AVX-512 tiles fuse the two (a prompt, pair tiles, one column pass), up's products are
// never stored: its scratch keeps what it held, which shows the fused tiles ran.
TEST(Packed, SwigluTilesGiveTheTwoProductsBits) {
  VariantGuard guard;
  set_amx_prefill(false);  // the AMX tiles take no fused form (matmul_swiglu runs the two products there)
  const auto variants = packed_variants();
  if (variants.empty()) GTEST_SKIP() << "no variant with a packed form on this CPU";
  struct Shape {
    size_t n_rows, n_cols, n_tok, rb, re;
  };
  const Shape shapes[] = {{96, 1024, 1, 0, 96},   {96, 1024, 5, 0, 96},  {96, 1024, 23, 7, 91}, {64, 512, 13, 16, 48},
                          {48, 8704, 9, 0, 48},   {48, 896, 6, 0, 48},   {4128, 512, 64, 5, 4123}};
  std::vector<float> store(64 * 4128 + 64), up_store(64 * 4128 + 64);
  float* const aligned = store.data() + (64 - reinterpret_cast<uintptr_t>(store.data()) % 64) % 64 / sizeof(float);
  for (DType t : kPacked) {
    if (is_h16(t)) continue;  // the FFN's f16/bf16 products read f32 activations: two products there
    for (const Shape& s : shapes) {
      if (s.n_cols % unit_of(t) != 0 || (s.n_rows > 1000 && t != DType::q8_0 && t != DType::q4_k)) continue;
      Matrix g = random_matrix(t, s.n_rows, s.n_cols, 900 + static_cast<uint32_t>(t));
      Matrix u = random_matrix(t, s.n_rows, s.n_cols, 950 + static_cast<uint32_t>(t));
      const std::vector<float> x = random_x(s.n_tok * s.n_cols, 61 + static_cast<uint32_t>(s.n_tok));
      const Acts a = quantise(x, s.n_tok, s.n_cols);
      const QuantizedActs xa = token_view(x, a, 0, s.n_tok, s.n_cols);
      const size_t n = s.n_tok * s.n_rows;
      for (const char* v : variants_for(variants, t)) {
        set_cpu_variant(v);
        ASSERT_TRUE(pack(g) && pack(u)) << v << " " << name_of(t);
        std::vector<float> want(n, -777.0f), want_up(n, -777.0f);
        matmul(g.packed(), xa, want.data(), s.n_rows, s.rb, s.re);
        matmul(u.packed(), xa, want_up.data(), s.n_rows, s.rb, s.re);
        for (size_t tok = 0; tok < s.n_tok; ++tok) {
          silu_mul(want.data() + tok * s.n_rows + s.rb, want_up.data() + tok * s.n_rows + s.rb, s.re - s.rb);
        }
        const bool fused = std::string(v) == "avx512vnni" && s.n_tok > 1 && s.n_cols >= 1024 && s.n_cols <= 8192;
        for (size_t offset : {size_t{0}, size_t{4}}) {  // floats past a 64-byte line: 0 streams, 4 cannot
          float* h = aligned + offset;
          std::fill(h, h + n, -777.0f);
          std::fill(up_store.begin(), up_store.begin() + n, -555.0f);
          matmul_swiglu(g.packed(), u.packed(), xa, h, up_store.data(), s.n_rows, s.rb, s.re);
          const std::string what = std::string(v) + " " + name_of(t) + " " + std::to_string(s.n_rows) + " x " +
                                   std::to_string(s.n_cols) + ", " + std::to_string(s.n_tok) + " tokens, rows " +
                                   std::to_string(s.rb) + "-" + std::to_string(s.re) + ", h " +
                                   std::to_string(offset * sizeof(float)) + " bytes past a line";
          ASSERT_TRUE(std::equal(want.begin(), want.end(), h)) << what;
          if (fused) {
            EXPECT_TRUE(std::all_of(up_store.begin(), up_store.begin() + n, [](float f) { return f == -555.0f; }))
                << what << ": up's products were stored (the fused tiles did not run)";
          }
        }
      }
    }
  }
}

TEST(Packed, SwigluRefusesMatricesOfTwoShapes) {
  VariantGuard guard;
  Matrix g = random_matrix(DType::q8_0, 32, 512, 1);
  Matrix u = random_matrix(DType::q8_0, 32, 1024, 2);
  const std::vector<float> x = random_x(2 * 512, 3);
  const Acts a = quantise(x, 2, 512);
  std::vector<float> h(64), up(64);
  EXPECT_THROW(matmul_swiglu(g.plain(), u.plain(), token_view(x, a, 0, 2, 512), h.data(), up.data(), 32, 0, 32),
               std::invalid_argument);
  EXPECT_THROW(matmul_swiglu(g.plain(), g.plain(), token_view(x, a, 0, 2, 512), h.data(), up.data(), 32, 0, 33),
               std::invalid_argument);
}
