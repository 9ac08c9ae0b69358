// Physical limits of this machine measured in-process: memory read bandwidth with all threads,
// the peak int8 dot-product rate (vpdpbusd in registers) and the peak f32 FMA rate. For benchmarks that print how far
// decode and prefill are from the floor; not used by the forward pass.
#pragma once

#include <cstddef>

namespace alap::kernels {

struct BandwidthProbe {
  double gbps = 0;        // best of the repeats: bytes read / seconds, 1e9 bytes per GB
  size_t bytes = 0;       // buffer size read per repeat
  size_t n_threads = 0;
};

// Each of n_threads threads (0 = hardware_concurrency) sums its slice of a `bytes` buffer with
// 256-bit loads; the buffer is written once first (so pages are real). Best of `repeats`.
BandwidthProbe measure_read_bandwidth(size_t n_threads, size_t bytes = size_t{512} << 20, int repeats = 5);

// A read-bandwidth probe that keeps its buffer (allocated and first touched once), so that one
// pass can be timed between pieces of other work: e.g. between decode tokens, each token's floor
// taken from the probes just before and after it, in the same state of a shared machine.
class ReadProbe {
 public:
  ReadProbe(size_t n_threads, size_t bytes);  // n_threads 0 = hardware_concurrency
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;
  double pass();  // reads the whole buffer once with n_threads threads; GB/s (1e9 bytes)
  // Reads slice t (< n_threads()) of the buffer once and returns its sum, so that a caller can run
  // the slices on threads of its own (a thread pool's, one slice each) and time the pass itself.
  unsigned long long read_slice(size_t t) const;
  size_t bytes() const { return bytes_; }
  size_t n_threads() const { return n_threads_; }

 private:
  size_t n_threads_ = 0, bytes_ = 0;
  unsigned char* buf_ = nullptr;
  unsigned long long sink_ = 0;
};

struct DotPeakProbe {
  double gmacs = 0;       // int8 multiply-accumulates per second / 1e9, all threads
  size_t lanes = 0;       // bytes per vpdpbusd: 64 (AVX-512 VNNI), 32 (AVX-VNNI/AVX512VL), 32 (AVX2 maddubs)
  const char* isa = "";   // "avx512vnni-512", "avx512vnni-256", "avxvnni", "avx2", "sse4"
  size_t n_threads = 0;
};

// Runs independent dot4 chains in registers for about `seconds` on each thread. lanes 0 = the
// widest this CPU has; 32 = the 256-bit form of the active variant (cpu_variant_name(): plain
// AVX2's maddubs + madd, AVX-VNNI's VEX vpdpbusd, else the widest 256-bit dot), the one its
// matmul kernels run; under the sse4 variant its 128-bit pmaddubsw + pmaddwd (lanes 16, isa "sse4").
DotPeakProbe measure_int8_dot_peak(size_t n_threads, size_t lanes = 0, double seconds = 0.2);

// The same for f32 FMAs, which the plain-weight products (f32, f16, bf16 files) run: gmacs counts
// f32 multiply-adds, lanes is 16 (isa "fma-512", the AVX-512 variant) or 8 ("fma-256", the 256-bit
// variants); lanes 0 and gmacs 0 under the scalar and sse4 variants. The prefill ceiling of a plain file.
DotPeakProbe measure_f32_fma_peak(size_t n_threads, double seconds = 0.2);

// The same for AMX's bf16 tile product (TDPBF16PS, rows of 32 bf16), where the CPU and the OS give
// the process the tiles (lanes 32, isa "amx-bf16"); lanes 0 and gmacs 0 elsewhere. The AVX-512
// prefill products run on the tiles there (quant.h amx_prefill()); they load an operand tile a
// product, which holds them to about 0.55 of this.
DotPeakProbe measure_amx_peak(size_t n_threads, double seconds = 0.2);

}  // namespace alap::kernels
