// Weight kernels on the CPU: dequantisation of every supported block type (FORMATS.md §2) and
// the matrix products of the forward pass. Each entry point dispatches at run time (cpuid) to
// the fastest variant this CPU has; the scalar variant is the oracle every other is tested against.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alap/kernels/dtype.h"

namespace alap::kernels {

// Dequantises n elements (a multiple of the block size) of type t from src into dst.
// t must have weights_supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k..q6_k).
void dequantize_row(DType t, const void* src, float* dst, size_t n);

// Quantises n f32 values into blocks of type t (q8_0, q4_0, ... and f16/bf16/f32); used by
// tests and tools that make models. Reference (round-to-nearest) quantisers, not optimal ones.
void quantize_row(DType t, const float* src, void* dst, size_t n);

// A weight matrix as stored in a GGUF file: n_rows rows of n_cols elements, each row
// dtype_row_bytes(n_cols) bytes, rows contiguous. `packed`, when set, is the same matrix made by
// pack_weights (row-interleaved); the products use it where the active variant has a packed path
// and read `data` otherwise, so `data` must stay valid.
struct WeightView {
  DType type;
  const void* data;
  size_t n_rows;
  size_t n_cols;
  const void* packed = nullptr;
};

// Bytes of w.data: n_rows rows of dtype_row_bytes(n_cols).
inline uint64_t matrix_bytes(const WeightView& w) {
  return dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), w.n_cols) * w.n_rows;
}

// Row-interleaved weights (kernels/cpu/packed_layout.h): groups of 16 rows whose blocks sit side
// by side, so one 512-bit vpdpbusd serves 16 rows of one token (256-bit: two halves of 8 rows).
// The bytes of w's packed form for the active variant (the same size as w.data), or 0 when it has
// none (type, shape or CPU: the products then read w.data). Today: the avx512vnni, avxvnni and
// avx2 variants (one layout for all), every type of packed_layout.h (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1,
// Q2_K..Q6_K, IQ4_NL, IQ4_XS, F16, BF16), n_rows a multiple of 16. ALAP_CPU_PACK_SKIP=q6_k,q8_0,...
// leaves the named types unpacked (to measure one type's share).
size_t packed_bytes(const WeightView& w);

// Writes w.data's packed form (packed_bytes(w) bytes; 64-byte alignment is best) to dst. Throws
// std::invalid_argument when packed_bytes(w) is 0. Products on the packed form give the same
// numbers whatever the token batch, row range or thread (not the same bits as the unpacked path).
void pack_weights(const WeightView& w, void* dst);

// y[t][r] = Σ_c W[r][c] · x[t][c] for tokens t in [0, n_tok) and rows r in [row_begin, row_end).
// x is [n_tok][n_cols] f32, y is [n_tok][ldy] f32. Callers split rows across threads.
void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end);

// Activations of one matrix product quantised once (per call, shared by every thread) to int8
// blocks of 32: x[t][c] ≈ d[t][c/32]·q[t][c]; s = Σ q of a block, s4 = Σ q of each 4 consecutive
// values (the lanes of a dot4). q, d, s, s4 are nullptr when n_cols is not a multiple of 32; the
// plain types (f32/f16/bf16) and the scalar oracle read x.
// The forms of QuantizedActs::tiles: none; rows, bf16(x) as the A tiles of the packed int8-code
// types (16 tokens × 32 columns a tile); pairs, hi = bf16(x) and lo = bf16(x − hi) as the B tiles
// of packed F16 and BF16 (pairs of columns × 16 tokens).
enum class ActsTiles : uint8_t { none, rows, pairs };

struct QuantizedActs {
  const float* x;      // [n_tok][n_cols] f32
  const int8_t* q;     // [n_tok][n_cols]
  const float* d;      // [n_tok][n_cols / 32]
  const int32_t* s;    // [n_tok][n_cols / 32]
  const int32_t* s4;   // [n_tok][n_cols / 4]
  size_t n_tok;
  size_t n_cols;
  // The same activations quantised again in blocks of 256 (one K-quant super-block):
  // x[t][c] ≈ d256[t][c/256]·q256[t][c], by quantize_activations_256. Read by the products for
  // which reads_acts_256 is true; nullptr otherwise (matmul then quantises them itself, per call).
  const int8_t* q256 = nullptr;  // [n_tok][n_cols]
  const float* d256 = nullptr;   // [n_tok][n_cols / 256]
  // The same activations as the AMX prefill's bf16 tiles (make_acts_tiles, below), made once for
  // several products: `tiles` holds the tile of tokens [0, 16) of this view first, and the lo tiles
  // of the pairs form start tiles_lo words after it. A product that reads tiles of this form uses
  // them instead of converting x itself; any other product ignores them.
  const uint16_t* tiles = nullptr;
  size_t tiles_lo = 0;
  ActsTiles tiles_form = ActsTiles::none;
};

// Fills q, d, s, s4 for tokens [0, n_tok) of x (n_cols a multiple of 32): d = max|x|/127,
// q = round-to-nearest-even(x / d) clamped to ±127 (d = 0 gives q = 0). Every variant gives the
// same bytes. Callers may split tokens across threads (each token is independent).
void quantize_activations(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4);

// quantize_activations' rule in blocks of 256 values (n_cols a multiple of 256): d = max|x|/127
// over the block, q = round-to-nearest-even(x / d) clamped to ±127. Every variant gives the same
// bytes.
void quantize_activations_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d);

// Whether matmul on w with n_tok tokens reads QuantizedActs' int8 blocks (q, d, s, s4): true for
// every type that multiplies int8 activations (block_elems > 1) unless the active variant's packed
// product takes the AMX tiles for that call, which reads x alone (amx_prefill(), below). A caller
// may then leave q null and skip quantising; where a product that needs the blocks gets none,
// matmul quantises them itself, for that call.
bool reads_int8_acts(const WeightView& w, size_t n_tok);

// The AMX prefill converts its call's activations to bf16 tiles, a few operations a value, in
// every call: a group of products over the same x, cut into row chunks for the threads, converted
// them once a chunk and a matrix (random Qwen2.5-0.5B Q8_0, two threads: 6.4% of a 128-token
// prompt). A caller may make them once instead and pass them in QuantizedActs::tiles; the products
// then give the same bits.
// - acts_tiles_form: the form matmul on w reads for n_tok tokens, none where it takes no tiles.
// - acts_tiles_words: the words of a form's tiles for n_tok tokens (hi, then lo for pairs); lo
//   starts at acts_tiles_words(f, n_tok, n_cols) / 2 for pairs.
// - make_acts_tiles: the tiles of tokens [t0, t1) of x ([n_tok][n_cols], n_cols a multiple of 32;
//   t0 a multiple of 16) into out, laid out for all n_tok tokens (threads may share out the tiles
//   of one x); the last tile's tokens past n_tok are zeros.
// A view of tokens [t0, n) of such tiles (t0 a multiple of 16) starts at out + t0·n_cols.
ActsTiles acts_tiles_form(const WeightView& w, size_t n_tok);
size_t acts_tiles_words(ActsTiles f, size_t n_tok, size_t n_cols);
void make_acts_tiles(ActsTiles f, const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1, uint16_t* out);

// True when matmul on w reads QuantizedActs::q256/d256 instead of the blocks of 32: the plain
// AVX2 products of packed Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS, which then apply the sub-block
// scales and mins in int32 and take one f32 step a super-block (docs/bench/cpu.md, "Super-block
// activations").
bool reads_acts_256(const WeightView& w);

// The same product as matmul() on activations already quantised by quantize_activations; the
// result for a (token, row) does not depend on n_tok, the row range or the thread that runs it.
void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);

// The FFN's SwiGLU over two matrices of one shape: h[t][r] = SiLU(gate·x)[t][r] · (up·x)[t][r] for
// tokens [0, x.n_tok) and rows [row_begin, row_end) (activation.h silu_mul's SiLU). h and up_out are
// [n_tok][ldh]; up_out's rows in the range are scratch and left undefined. The same bits as
// matmul(gate) into h, matmul(up) into up_out and silu_mul on each token's rows, which is what runs
// where the variant has no fused form: the AVX-512 tiles of a prompt multiply a row group of gate
// and the same rows of up side by side and apply SiLU to their sums in registers, so up's products
// are never stored and no pass over the rows follows (docs/bench/cpu.md, session 62).
void matmul_swiglu(const WeightView& gate, const WeightView& up, const QuantizedActs& x, float* h, float* up_out,
                   size_t ldh, size_t row_begin, size_t row_end);

// The variant the dispatcher chose for this CPU ("scalar", "sse4", "avx2", "avx512vnni", ...).
const char* cpu_variant_name();

// Forces the scalar oracle (tests compare variants). Not thread-safe; call before use.
void force_scalar_kernels(bool on);

// Selects a variant by name ("scalar", "sse4", "avx2", "avxvnni", "avx512vnni"; "best" or nullptr restores the
// dispatcher's choice). Returns false, changing nothing, when this CPU cannot run it. For tests
// and benchmarks; not thread-safe.
bool set_cpu_variant(const char* name);

// Whether the VNNI kernels' one-token products on packed Q8_0, Q4_0, Q4_1 and IQ4_NL (Q4_0's bytes,
// which follows Q4_0's choice) ask for their bytes ahead in software (prefetch), as every other
// packed type and the plain AVX2 kernels always do.
// Automatic: off on AMD Zen (family 17h and later; measured on Zen 5, where a token took 5-22%
// less time without it), on elsewhere (the H200 host's Xeon: up to 36% slower without it).
// Packed F16 and BF16 (every variant) read ahead all the way when on, over a call's first 512 KiB
// when off (docs/bench/cpu.md, "Packed f16 and bf16 (session 26)").
// ALAP_CPU_READ_AHEAD=on or off overrides automatic. Results do not depend on it.
// docs/bench/cpu.md, "Decode read-ahead by vendor (session 25)".
enum class ReadAhead { automatic, on, off };
void set_light_read_ahead(ReadAhead mode);  // for tests and benchmarks
bool light_read_ahead();                    // what the products do now

// Whether the AVX-512 variant's prefill products on packed weights (32 tokens or more a call; F16
// and BF16 from 16) run on the AMX tile unit in bf16 (TDPBF16PS: Xeon since Sapphire Rapids), where
// the CPU, the OS and the process allow it and neither ALAP_CPU_AMX=off nor set_amx_prefill(false)
// refuses it. There each quantised weight (scale · code + offset) and each f32 activation is
// rounded to bf16 (F16 weights stay exact, as two bf16 parts) and the products are summed in f32:
// not the bits of the int8 activation blocks (or f32 FMAs) that a decode token and a call of fewer
// tokens take (on random rows the bf16 sums lie nearer the exact product). A token's result still
// does not depend on the other tokens of its call, the row range or the thread.
// docs/bench/cpu.md, "Prefill on the AMX tiles in bf16 (session 52)". The same switch governs the
// prompt attention's tiles (attn.h "Prompt tiles"; docs/bench/cpu.md, "Prompt attention on the AMX
// tiles (session 53)").
void set_amx_prefill(bool allowed);  // for tests and benchmarks
bool amx_prefill();                  // what the products do now
// The tokens a call of quantised packed weights needs to take the tiles (F16 / BF16: 16). 2048 x
// 2048, one thread, AMX against the VNNI tiles: 16 tokens 0.79-0.92x (Q8_0, Q4_K, Q6_K), 24
// 0.86-0.97x, 32 1.08-1.24x, 64 1.6-1.8x.
inline constexpr size_t kAmxPrefillMinTokens = 32;
// Whether the active variant's prefill runs on the tiles: it is the AVX-512 variant (a forced
// 256-bit variant has none) and amx_prefill().
bool amx_prefill_active();

// Whether the AVX-512 VNNI prefill takes two row groups a tile where a type has such tiles (Q8_0,
// Q4_K, Q4_0, Q5_0, Q4_1, Q5_1 on rows of 1024 columns or more): each token's activation bytes are
// broadcast once for both groups' dots. The same bits either way; the switch is for tests and
// benchmarks. docs/bench/cpu.md, "The dot-peak probe on Intel cores; tiles of two row groups
// (session 56)".
void set_pair_tiles(bool allowed);
bool pair_tiles_allowed();

}  // namespace alap::kernels
