// physical_core_count: cores from sysfs topology files, restricted to the affinity mask and, on
// hybrid Intel parts, to the performance cores. A file that is missing or does not parse makes its
// method unusable for every CPU (no mixing of methods, which could count one core twice under two
// different keys).
#include "core/runtime/cpu_topology.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

namespace alap {

namespace {

std::optional<std::string> read_trimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return std::string();
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// A whole decimal number, optionally negative (physical_package_id may be -1).
std::optional<long long> parse_integer(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<size_t> parse_cpu_id(const std::string& s) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return std::nullopt;
  const auto v = parse_integer(s);
  if (!v || *v > (1LL << 20)) return std::nullopt;  // sysfs ids are small; this rejects garbage
  return static_cast<size_t>(*v);
}

// The kernel's CPU list format, "0-3,8,10-11": ascending ids, no duplicates; nullopt when garbled
// or empty.
std::optional<std::vector<size_t>> parse_cpu_list(const std::string& text) {
  std::set<size_t> ids;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    const auto lo = parse_cpu_id(part.substr(0, dash));
    const auto hi = dash == std::string::npos ? lo : parse_cpu_id(part.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (size_t c = *lo; c <= *hi; ++c) ids.insert(c);
  }
  if (ids.empty()) return std::nullopt;
  return std::vector<size_t>(ids.begin(), ids.end());
}

using CoreKey = std::vector<long long>;

// One way of naming the core of a CPU: nullopt when this CPU's files do not allow it.
using KeyReader = std::optional<CoreKey> (*)(const std::string& topology_dir);

std::optional<CoreKey> key_from_list(const std::string& path) {
  const auto text = read_trimmed(path);
  if (!text) return std::nullopt;
  const auto ids = parse_cpu_list(*text);
  if (!ids) return std::nullopt;
  return CoreKey(ids->begin(), ids->end());
}

std::optional<CoreKey> key_core_cpus(const std::string& dir) { return key_from_list(dir + "/core_cpus_list"); }
std::optional<CoreKey> key_thread_siblings(const std::string& dir) { return key_from_list(dir + "/thread_siblings_list"); }

std::optional<CoreKey> key_package_core(const std::string& dir) {
  const auto package = read_trimmed(dir + "/physical_package_id");
  const auto core = read_trimmed(dir + "/core_id");
  if (!package || !core) return std::nullopt;
  const auto p = parse_integer(*package), c = parse_integer(*core);
  if (!p || !c) return std::nullopt;
  return CoreKey{*p, *c};
}

// The allowed CPUs that a hybrid Intel part lists as performance cores in devices_dir/cpu_core/cpus
// (the E-cores are in cpu_atom/cpus; neither exists on other machines). All of `cpus` when the
// split does not apply: no such list, unreadable or garbled, or every allowed CPU on one side of
// it (taskset or a cpuset on the E-cores alone). Ids in the list with no CPU directory are ignored.
std::set<size_t> performance_cpus(const std::string& devices_dir, const std::set<size_t>& cpus) {
  const auto text = read_trimmed(devices_dir + "/cpu_core/cpus");
  if (!text) return cpus;
  const auto listed = parse_cpu_list(*text);
  if (!listed) return cpus;
  std::set<size_t> p_cpus;
  for (size_t cpu : cpus)
    if (std::binary_search(listed->begin(), listed->end(), cpu)) p_cpus.insert(cpu);
  return p_cpus.empty() ? cpus : p_cpus;  // all of them in the list: p_cpus is cpus
}

size_t fallback_count(size_t n_allowed) {
  if (n_allowed > 0) return n_allowed;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

size_t physical_core_count(const std::string& cpu_dir, const std::string& devices_dir,
                           const std::vector<size_t>& allowed_cpus) {
  const std::set<size_t> allowed(allowed_cpus.begin(), allowed_cpus.end());
  if (allowed.empty()) return fallback_count(0);
  const std::set<size_t> cpus = performance_cpus(devices_dir, allowed);
  for (KeyReader read_key : {key_core_cpus, key_thread_siblings, key_package_core}) {
    std::set<CoreKey> cores;
    bool complete = true;
    for (size_t cpu : cpus) {
      const auto key = read_key(cpu_dir + "/cpu" + std::to_string(cpu) + "/topology");
      if (!key) {
        complete = false;
        break;
      }
      cores.insert(*key);
    }
    if (complete) return cores.size();
  }
  return fallback_count(cpus.size());
}

std::vector<size_t> allowed_cpus() {
  // The mask grows until the kernel's CPU count fits (EINVAL: too small).
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (!set) return {};
    const size_t bytes = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(bytes, set);
    if (sched_getaffinity(0, bytes, set) == 0) {
      std::vector<size_t> ids;
      for (int c = 0; c < n; ++c)
        if (CPU_ISSET_S(c, bytes, set)) ids.push_back(static_cast<size_t>(c));
      CPU_FREE(set);
      return ids;
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) return {};
  }
  return {};
}

size_t physical_core_count() {
  return physical_core_count("/sys/devices/system/cpu", "/sys/devices", allowed_cpus());
}

}  // namespace alap
