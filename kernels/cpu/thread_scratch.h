// Per-thread scratch buffers for the ISA files (avx2/, avx_vnni/, avx512_vnni/), private to
// kernels/cpu. Those files must not instantiate std::vector (or any other library template that
// is not inlined away): every such instantiation is a weak symbol that other files instantiate
// too, and the linker keeps one copy, which may be the one compiled with the ISA's flags — an
// AVX-512 std::vector<...>::_M_default_append then runs on an AVX2 machine (illegal instruction;
// seen in the ASan build, session 20). tests/kernels/cpu/isa_weak_symbols_check.sh enforces it.
#pragma once

#include <cstddef>

namespace alap::kernels {

// One buffer per slot and thread; a product's calls use them one after another, never nested.
enum ScratchSlot : int {
  kScratchActs,      // packed products: the tile's activations, interleaved
  kScratchActScale,  // their scales
  kScratchOfs,       // offsets
  kScratchOfsOne,    // one token's offsets
  kScratchSums,      // block sums
  kScratchSumsOne,   // one token's block sums
  kScratchUnpacked,  // AVX-512 prefill: one column pass of a group (a pair tile: of two), unpacked
  kScratchRows,      // plain-weight prefill: a panel of rows as f32
  kScratchBf16Acts,  // AMX bf16 prefill: a chunk's activations as bf16
  kScratchBf16Rows,  // AMX bf16 prefill: a column pass of two groups as bf16
  kScratchAttnQ,       // AMX prompt attention: the queries (A tiles, or packed rows)
  kScratchAttnK,       // AMX prompt attention: the keys' B tiles
  kScratchAttnScales,  // AMX prompt attention: packed queries' and keys' scales
  kScratchAttnV,       // AMX prompt attention: the values' B tiles
  kScratchAttnP,       // AMX prompt attention: a slab's probabilities as A tiles
  kScratchAttnC,       // AMX prompt attention: the sums out of the tiles
  kScratchSlots
};

// This thread's buffer `slot`, at least `bytes` long and 64-byte aligned. Its contents are kept
// from call to call only while it does not grow. Throws std::bad_alloc.
void* thread_scratch(ScratchSlot slot, size_t bytes);

namespace {  // internal linkage in every file that uses it: no weak symbols to share

// The part of std::vector the kernels used (resize, data, []) over thread_scratch(slot).
template <class T>
struct ScratchArray {
  ScratchSlot slot;
  T* p = nullptr;
  void resize(size_t n) { p = static_cast<T*>(thread_scratch(slot, n * sizeof(T))); }
  T* data() const { return p; }
  T& operator[](size_t i) const { return p[i]; }
};

}  // namespace

}  // namespace alap::kernels
