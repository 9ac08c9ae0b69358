// gpu_logits_top (ops.h): the m best logits of a row on the device, so that a decode step sends
// the sampler a few hundred bytes instead of the row (600 KB for a 150k-token vocabulary).
// Exact, in the sampler's order (logit descending, then lower index), in two launches:
//   1. one block a chunk of 8192 logits: the chunk's best `need` = min(m, chunk) as sorted keys;
//   2. one block a chunk's list: each key's rank among all lists (binary search in each other
//      list), written at that rank when it is below m. No sort of the whole row, no atomics on
//      the row's values, the same result whatever the scheduling.
// Both are latency-bound (a few barriers and search steps, not bytes): sorts exchange through
// shuffles within 32 lanes, and the merge searches the lists in shared memory.
// Not the sampler (core/sample takes these entries) and not the logits themselves (matmul.hip).
#include <climits>
#include <stdexcept>

#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"

namespace alap::gpu {

namespace {

constexpr int kTopThreads = 512;                     // threads of a first-pass block
constexpr int kTopPerThread = 16;                    // logits a thread reads there
constexpr int kTopChunk = kTopThreads * kTopPerThread;  // logits a first-pass block covers
constexpr int kTopMaxM = 256;                        // the largest m (ops.h)
static_assert(kTopPerThread * kTopMaxM >= 2 * kTopThreads, "the candidates' buffer is also the sort's");

using Key = unsigned long long;

// A logit and its index as one key whose unsigned order is the sampler's order: the float's bits
// mapped so that larger floats are larger (sign flipped for positives, all bits for negatives;
// -0 taken as +0, which compares equal to it), then the inverted index, so that of equal logits
// the lower index is the larger key. Keys of distinct indices differ. Padding is key 0, below any
// logit's key (whose high half is at least ~bits(-NaN) > 0 or whose low half is non-zero).
__device__ __forceinline__ Key top_key(float v, int i) {
  unsigned u = __float_as_uint(v == 0.0f ? 0.0f : v);
  u = (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
  return (static_cast<Key>(u) << 32) | static_cast<unsigned>(~static_cast<unsigned>(i));
}
__device__ __forceinline__ float key_logit(Key k) {
  unsigned u = static_cast<unsigned>(k >> 32);
  u = (u & 0x80000000u) != 0 ? (u & 0x7FFFFFFFu) : ~u;
  return __uint_as_float(u);
}
__device__ __forceinline__ int key_index(Key k) { return static_cast<int>(~static_cast<unsigned>(k)); }

// A key exchanged between lanes of a 32-lane group (two 32-bit shuffles).
__device__ __forceinline__ Key shfl_xor_key(Key v, int lane_mask) {
  const int lo = alap_shfl_xor(static_cast<int>(static_cast<unsigned>(v)), lane_mask, 32);
  const int hi = alap_shfl_xor(static_cast<int>(static_cast<unsigned>(v >> 32)), lane_mask, 32);
  return (static_cast<Key>(static_cast<unsigned>(hi)) << 32) | static_cast<unsigned>(lo);
}

// A bitonic network over the block, one key a thread: returns thread t's key of the n keys of
// threads 0..n-1 sorted descending (n a power of two <= kTopThreads; every thread of the block
// calls it, those from n on get no meaningful key; warps wholly past n skip the work). Pairs closer
// than 32 lanes exchange through shuffles; farther ones through buf (2·kTopThreads keys, two
// halves used in turn, so one barrier a step: a half is written again only after the next step's
// barrier, which every thread passes only after reading it). A 512-key sort: 10 barriers, not 45.
__device__ Key sort_block_desc(Key v, int n, Key* buf) {
  const int t = threadIdx.x;
  const bool active = (t & ~31) < n;  // the thread's 32-lane group holds keys
  int half = 0;
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      Key p = v;
      if (stride >= 32) {
        Key* x = buf + half * kTopThreads;
        half ^= 1;
        if (active) x[t] = v;
        __syncthreads();
        if (active) p = x[t ^ stride];
      } else if (active) {
        p = shfl_xor_key(v, stride);
      }
      // In the pair (i, i + stride) of a descending run the lower thread keeps the larger key.
      const bool keep_max = ((t & stride) == 0) == ((t & size) == 0);
      v = keep_max ? (v > p ? v : p) : (v < p ? v : p);
    }
  }
  return v;
}

// Sorts s[0..n) descending (n a power of two) with the block's threads through shared memory: a
// bitonic network for n up to 8·kTopThreads (the rare case of more candidates than threads).
// Starts and ends with a barrier, so the caller's writes to s before it and reads after it are
// ordered.
__device__ void sort_desc(Key* s, int n) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      for (int t = threadIdx.x; t < n / 2; t += blockDim.x) {
        const int i = 2 * t - (t & (stride - 1));  // the pair (i, i + stride), bit `stride` of i clear
        const bool desc = (i & size) == 0;         // the direction of this run of the network
        const Key a = s[i], b = s[i + stride];
        if ((a < b) == desc) {
          s[i] = b;
          s[i + stride] = a;
        }
      }
    }
  }
  __syncthreads();
}

// Pass 1: block b takes x[b·kTopChunk ..) and writes its best need = min(m, chunk length) keys,
// sorted, to lists[b][0..need), need to lens[b] and the lowest index of a NaN in it (or -1) to
// nans[b]. Thread t reads logits t, t + 512, ... of the chunk.
// The best need are found without sorting the chunk: L = the need-th largest of the 512 threads'
// maxima is at most the chunk's need-th largest key (need keys, those maxima, are >= L), so the
// best need are among the keys >= L; and every key >= L belongs to one of those need threads,
// whose 16 keys each bound their number by 16·need <= 4096. Those are sorted, the first need
// kept (about 1.3·need of them on random logits).
__global__ void __launch_bounds__(kTopThreads) logits_top_chunks(const float* x, int n, int m, Key* lists, int* lens,
                                                                 int* nans) {
  alap_pdl_begin();
  __shared__ Key s[kTopPerThread * kTopMaxM];  // the candidates, at most 16·need
  __shared__ Key lo_key;
  __shared__ int count, first_nan;
  const int t = threadIdx.x;
  const int b = blockIdx.x;
  const int start = b * kTopChunk;
  const int len = min(kTopChunk, n - start);
  const int need = min(m, len);
  Key key[kTopPerThread];
  Key top = 0;
  int nan_at = INT_MAX;
#pragma unroll
  for (int j = 0; j < kTopPerThread; ++j) {
    const int i = j * kTopThreads + t;
    key[j] = 0;
    if (i < len) {
      const float v = x[start + i];
      if (v != v) nan_at = min(nan_at, start + i);
      key[j] = top_key(v, start + i);
    }
    top = key[j] > top ? key[j] : top;
  }
  if (t == 0) {
    count = 0;
    first_nan = INT_MAX;
  }
  const Key ranked = sort_block_desc(top, kTopThreads, s);
  // need <= min(len, 512) threads hold a logit, so L is a logit's key (> 0): padding stays out.
  if (t == need - 1) lo_key = ranked;
  if (nan_at != INT_MAX) atomicMin(&first_nan, nan_at);
  __syncthreads();  // L is known, and every thread is past the sort's last read of s
  const Key lo = lo_key;
#pragma unroll
  for (int j = 0; j < kTopPerThread; ++j) {
    if (key[j] >= lo) s[atomicAdd(&count, 1)] = key[j];
  }
  __syncthreads();
  const int cnt = count;  // need <= cnt <= 16·need
  int n2 = 1;
  while (n2 < cnt) n2 <<= 1;
  Key* out = lists + static_cast<size_t>(b) * kTopMaxM;
  if (n2 <= kTopThreads) {
    const Key mine = t < cnt ? s[t] : 0;
    __syncthreads();  // s is the sort's buffer next
    const Key v = sort_block_desc(mine, n2, s);
    if (t < need) out[t] = v;
  } else {
    for (int i = cnt + t; i < n2; i += kTopThreads) s[i] = 0;
    sort_desc(s, n2);
    for (int i = t; i < need; i += kTopThreads) out[i] = s[i];
  }
  if (t == 0) {
    lens[b] = need;
    nans[b] = first_nan == INT_MAX ? -1 : first_nan;
  }
}

// How many of list[0..len) (sorted descending, distinct) are above k.
__device__ __forceinline__ int count_above(const Key* list, int len, Key k) {
  int lo = 0, hi = len;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (list[mid] > k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

constexpr int kMergeLists = 64;    // lists the merge stages in shared memory, at most
constexpr int kMergeKeys = 5120;   // keys it stages (40 KB): 19 lists of 256 (Qwen's 151936 logits)

// Pass 2: block b ranks list b's keys among all n_lists lists (its own position plus, in each
// other list, the keys above it: keys are distinct, so the ranks are 0, 1, ... without gaps) and
// writes those ranked below m to out. Block 0 also writes the row's first NaN and the count. The
// lengths, and the lists when they fit, are first copied into shared memory with loads all in
// flight at once (a search step then costs ~30 cycles instead of an L2 round trip, and no loop
// waits on a length it has just asked for); else the lists are searched where they are.
__global__ void __launch_bounds__(kTopMaxM) logits_top_merge(const Key* lists, const int* lens, const int* nans,
                                                             int n_lists, int m, int32_t* out) {
  alap_pdl_begin();
  __shared__ Key staged[kMergeKeys];
  __shared__ int slen[kMergeLists], snan[kMergeLists], offset[kMergeLists + 1];
  const int b = blockIdx.x;
  const int t = threadIdx.x;
  const bool few = n_lists <= kMergeLists;
  bool in_shared = false;
  if (few) {
    if (t < n_lists) {
      slen[t] = lens[t];
      snan[t] = nans[t];
    }
    __syncthreads();
    if (t == 0) {
      offset[0] = 0;
      for (int o = 0; o < n_lists; ++o) offset[o + 1] = offset[o] + slen[o];
    }
    __syncthreads();
    in_shared = offset[n_lists] <= kMergeKeys;
    if (in_shared) {
      for (int i = t; i < n_lists * kTopMaxM; i += kTopMaxM) {
        const int o = i / kTopMaxM, j = i % kTopMaxM;
        if (j < slen[o]) staged[offset[o] + j] = lists[i];
      }
      __syncthreads();
    }
  }
  const auto len = [&](int o) { return few ? slen[o] : lens[o]; };
  const auto list = [&](int o) -> const Key* {
    return in_shared ? staged + offset[o] : lists + static_cast<size_t>(o) * kTopMaxM;
  };
  if (t < len(b)) {
    const Key k = list(b)[t];
    int rank = t;
    for (int o = 0; o < n_lists; ++o) {
      if (o != b) rank += count_above(list(o), len(o), k);
    }
    if (rank < m) {
      out[2 + rank] = key_index(k);
      out[2 + m + rank] = static_cast<int32_t>(__float_as_uint(key_logit(k)));
    }
  }
  if (b == 0 && t == 0) {
    int first = -1, total = 0;
    for (int o = 0; o < n_lists; ++o) {
      const int nan_o = few ? snan[o] : nans[o];
      if (nan_o >= 0 && (first < 0 || nan_o < first)) first = nan_o;
      total += len(o);
    }
    out[0] = first;
    out[1] = min(m, total);
  }
}

int top_lists(int n) { return (n + kTopChunk - 1) / kTopChunk; }

}  // namespace

extern "C" {

size_t gpu_logits_top_scratch_bytes(int n) {
  if (n <= 0) return 0;
  const size_t lists = static_cast<size_t>(top_lists(n));
  return lists * kTopMaxM * sizeof(Key) + 2 * lists * sizeof(int);
}

int gpu_logits_top(const float* d_x, int n, int m, int32_t* d_out, void* d_scratch, void* stream) {
  return gpu_api_call("gpu_logits_top", [&] {
    if (n <= 0) throw std::invalid_argument("n must be positive");
    if (m < 1 || m > kTopMaxM) throw std::invalid_argument("m must be in [1, 256]");
    if (d_x == nullptr || d_out == nullptr || d_scratch == nullptr) throw std::invalid_argument("null pointer");
    const int n_lists = top_lists(n);
    Key* lists = static_cast<Key*>(d_scratch);
    int* lens = reinterpret_cast<int*>(lists + static_cast<size_t>(n_lists) * kTopMaxM);
    int* nans = lens + n_lists;
    const auto s = static_cast<alap_gpu_stream_t>(stream);
    alap_launch(logits_top_chunks, n_lists, kTopThreads, 0, s, d_x, n, m, lists, lens, nans);
    ALAP_GPU_CHECK_LAUNCH();
    alap_launch(logits_top_merge, n_lists, kTopMaxM, 0, s, static_cast<const Key*>(lists),
                static_cast<const int*>(lens), static_cast<const int*>(nans), n_lists, m, d_out);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

}  // extern "C"

}  // namespace alap::gpu
