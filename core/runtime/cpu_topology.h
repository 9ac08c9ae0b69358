// How many physical cores this process may run on, only the P-cores on hybrid Intel parts: the
// default thread count of ThreadPool(0) and of the engine's n_threads = 0 (SMT siblings share a
// core's load ports, and an E-core holding a chunk makes every other thread wait at each of
// decode's barriers). Linux sysfs and sched_getaffinity; not a general topology library (no
// caches, no NUMA).
//
//   alap::ThreadPool pool(alap::physical_core_count());  // what ThreadPool(0) does
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace alap {

// The distinct physical cores among the CPUs this process may run on (sched_getaffinity, so
// taskset and cgroup cpusets count), read from /sys/devices/system/cpu/cpuN/topology/. On a hybrid
// Intel part (/sys/devices/cpu_core/cpus lists the P-cores) whose allowed CPUs include both P- and
// E-cores, only the P-cores count; allowed only on one kind, all of them count. Falls back to the
// number of allowed CPUs (P-cores only, as above) when sysfs cannot be read, to
// hardware_concurrency() when the affinity cannot, and to 1 when neither is known. Always >= 1.
// Reads the system on every call.
size_t physical_core_count();

// The same count for a given CPU directory (the parent of cpu0/, cpu1/, ...), devices directory
// (the parent of cpu_core/; /sys/devices) and allowed CPU ids, for tests on fake trees. The
// allowed CPUs are first cut to those in devices_dir/cpu_core/cpus when that list is readable,
// well-formed and holds some but not all of them. A core is the set of CPUs sharing it:
// topology/core_cpus_list, else thread_siblings_list, else the pair (physical_package_id,
// core_id); the first of the three that every remaining CPU has, readable and well-formed,
// decides. When none does, the count is the number of remaining CPUs (duplicates counted once);
// no allowed CPUs: hardware_concurrency(), else 1.
size_t physical_core_count(const std::string& cpu_dir, const std::string& devices_dir,
                           const std::vector<size_t>& allowed_cpus);

// The CPU ids this process may run on, ascending; empty when sched_getaffinity fails.
std::vector<size_t> allowed_cpus();

}  // namespace alap
