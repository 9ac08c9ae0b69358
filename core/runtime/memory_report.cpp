// make_memory_report: KV figures through memory_plan's kv_cache_bytes; CPU "device" memory from
// /proc/meminfo and the process's resident set from /proc/self/statm.
#include "core/runtime/memory_report.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/runtime/kv_cache.h"
#include "core/runtime/memory_plan.h"

namespace alap {

std::optional<SystemMemory> read_system_memory() {
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  SystemMemory m;
  bool have_total = false, have_avail = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    uint64_t kib = 0;
    if (!(ls >> key >> kib)) continue;
    if (key == "MemTotal:") {
      m.total_bytes = kib * 1024;
      have_total = true;
    } else if (key == "MemAvailable:") {
      m.available_bytes = kib * 1024;
      have_avail = true;
    }
  }
  if (!have_total || !have_avail) return std::nullopt;
  return m;
}

uint64_t process_resident_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size_pages = 0, resident_pages = 0;
  if (!(in >> size_pages >> resident_pages)) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return resident_pages * static_cast<uint64_t>(page > 0 ? page : 4096);
}

MemoryReport make_memory_report(const KvCache& cache, uint64_t weights_bytes, uint64_t scratch_bytes) {
  MemoryReport r;
  const KvShape shape = cache.shape();
  const KvBytes now = kv_cache_bytes(shape, cache.mode(), cache.n_tokens());
  const KvBytes f16 = kv_cache_bytes(shape, CacheMode::f16, cache.n_tokens());
  r.kv_fp16_bytes = f16.total;
  r.kv_bytes = now.total;
  r.k_bytes = now.k_bytes;
  r.v_bytes = now.v_bytes;
  r.kv_capacity_bytes = cache.allocated_bytes();
  r.weights_bytes = weights_bytes;
  r.scratch_bytes = scratch_bytes;
  if (auto sys = read_system_memory()) {
    r.device_total_bytes = sys->total_bytes;
    r.device_free_bytes = sys->available_bytes;
  }
  r.process_resident_bytes = process_resident_bytes();
  return r;
}

}  // namespace alap
