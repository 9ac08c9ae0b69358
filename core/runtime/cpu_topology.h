// How many physical cores this process may run on: the default thread count of ThreadPool(0) and
// of the engine's n_threads = 0 (SMT siblings share a core's load ports and slow memory-bound
// decode). Linux sysfs and sched_getaffinity; not a general topology library (no caches, no NUMA).
//
//   alap::ThreadPool pool(alap::physical_core_count());  // what ThreadPool(0) does
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace alap {

// The distinct physical cores among the CPUs this process may run on (sched_getaffinity, so
// taskset and cgroup cpusets count), read from /sys/devices/system/cpu/cpuN/topology/. Falls back
// to the number of allowed CPUs when sysfs cannot be read, to hardware_concurrency() when the
// affinity cannot, and to 1 when neither is known. Always >= 1. Reads the system on every call.
size_t physical_core_count();

// The same count for a given CPU directory (the parent of cpu0/, cpu1/, ...) and allowed CPU
// ids, for tests on fake trees. A core is the set of CPUs sharing it: topology/core_cpus_list,
// else thread_siblings_list, else the pair (physical_package_id, core_id); the first of the three
// that every allowed CPU has, readable and well-formed, decides. When none does, the count is
// allowed_cpus.size() (duplicates counted once); no allowed CPUs: hardware_concurrency(), else 1.
size_t physical_core_count(const std::string& cpu_dir, const std::vector<size_t>& allowed_cpus);

// The CPU ids this process may run on, ascending; empty when sched_getaffinity fails.
std::vector<size_t> allowed_cpus();

}  // namespace alap
