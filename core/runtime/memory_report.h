// The memory report of DESIGN.md "Memory report" (what the VRAM meter shows), computed from a
// KvCache with memory_plan's kv_cache_bytes, and the CPU's device memory from /proc/meminfo.
// Not a GPU query: a GPU backend fills device_* itself.
//
//   alap::MemoryReport r = alap::make_memory_report(cache, model.weights_bytes(), scratch_bytes);
//   // r.kv_fp16_bytes vs r.kv_bytes: the saving of the packed mode for the tokens now cached
#pragma once

#include <cstdint>
#include <optional>

namespace alap {

class KvCache;

struct MemoryReport {
  uint64_t kv_fp16_bytes = 0;      // the tokens now cached, if they were stored in f16
  uint64_t kv_bytes = 0;           // the tokens now cached, in the current mode (= k + v)
  uint64_t k_bytes = 0;
  uint64_t v_bytes = 0;
  uint64_t kv_capacity_bytes = 0;  // what the cache has allocated
  uint64_t weights_bytes = 0;
  uint64_t scratch_bytes = 0;
  uint64_t device_total_bytes = 0; // CPU: MemTotal
  uint64_t device_free_bytes = 0;  // CPU: MemAvailable
  uint64_t process_resident_bytes = 0;  // CPU: this process's resident set (0 if unknown)
};

struct SystemMemory {
  uint64_t total_bytes = 0;      // MemTotal
  uint64_t available_bytes = 0;  // MemAvailable
};

// Reads /proc/meminfo; empty when it cannot be read.
std::optional<SystemMemory> read_system_memory();
// Resident set of this process from /proc/self/statm; 0 when unknown.
uint64_t process_resident_bytes();

// Fills every field: KV figures from cache (n_tokens, mode) via kv_cache_bytes, device figures
// from read_system_memory() (CPU).
MemoryReport make_memory_report(const KvCache& cache, uint64_t weights_bytes, uint64_t scratch_bytes);

}  // namespace alap
