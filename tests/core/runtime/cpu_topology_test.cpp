// core/runtime/cpu_topology: physical cores counted on fake sysfs trees (SMT siblings, affinity
// subsets, two packages, each of the three ways to name a core, garbled files), and on this machine.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/cpu_topology.h"
#include "core/runtime/thread_pool.h"

namespace alap {
namespace {

namespace fs = std::filesystem;

// A temporary directory standing for /sys/devices/system/cpu, removed at the end of the test.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("alap_cpu_topology_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(size_t cpu, const std::string& file, const std::string& text) {
    const fs::path dir = root_ / ("cpu" + std::to_string(cpu)) / "topology";
    fs::create_directories(dir);
    std::ofstream(dir / file) << text;
  }
  // Every file a modern kernel writes for one CPU (values end in a newline, as in sysfs).
  void cpu(size_t id, int package, int core, const std::string& siblings) {
    write(id, "physical_package_id", std::to_string(package) + "\n");
    write(id, "core_id", std::to_string(core) + "\n");
    write(id, "core_cpus_list", siblings + "\n");
    write(id, "thread_siblings_list", siblings + "\n");
  }
  size_t count(const std::vector<size_t>& allowed) const { return physical_core_count(root_.string(), allowed); }

  fs::path root_;
};

// Linux numbers SMT siblings of a 2-core package as cpu0/cpu2 (core 0) and cpu1/cpu3 (core 1).
TEST_F(FakeSysfs, TwoCoresWithTwoSiblingsEachAreTwo) {
  cpu(0, 0, 0, "0,2");
  cpu(1, 0, 1, "1,3");
  cpu(2, 0, 0, "0,2");
  cpu(3, 0, 1, "1,3");
  EXPECT_EQ(count({0, 1, 2, 3}), 2u);
}

TEST_F(FakeSysfs, SiblingsAsARangeAreOneCore) {
  // Siblings numbered next to each other (cpu0/cpu1 = core 0, ...), as on many AMD machines.
  for (size_t c = 0; c < 8; ++c) {
    const size_t first = c / 2 * 2;
    cpu(c, 0, static_cast<int>(c / 2), std::to_string(first) + "-" + std::to_string(first + 1));
  }
  EXPECT_EQ(count({0, 1, 2, 3, 4, 5, 6, 7}), 4u);
  EXPECT_EQ(count({0, 2, 4, 6}), 4u);  // one sibling of each core
  EXPECT_EQ(count({2, 3, 6}), 2u);
}

TEST_F(FakeSysfs, WithoutSmtEveryCpuIsACore) {
  for (size_t c = 0; c < 6; ++c) cpu(c, 0, static_cast<int>(c), std::to_string(c));
  EXPECT_EQ(count({0, 1, 2, 3, 4, 5}), 6u);
  EXPECT_EQ(count({1, 4}), 2u);
}

TEST_F(FakeSysfs, AffinityHoldingBothSiblingsOfOneCoreIsOne) {
  cpu(0, 0, 0, "0,2");
  cpu(1, 0, 1, "1,3");
  cpu(2, 0, 0, "0,2");
  cpu(3, 0, 1, "1,3");
  EXPECT_EQ(count({0, 2}), 1u);
  EXPECT_EQ(count({3}), 1u);
  EXPECT_EQ(count({3, 1, 3}), 1u);  // order and duplicates do not matter
}

// Core ids restart in each package: (package, core) must be the key, not the core id alone.
TEST_F(FakeSysfs, EqualCoreIdsInTwoPackagesAreCountedApart) {
  for (size_t c = 0; c < 4; ++c) {  // only the id files, as older kernels write them
    write(c, "physical_package_id", std::to_string(c / 2) + "\n");
    write(c, "core_id", std::to_string(c % 2) + "\n");
  }
  EXPECT_EQ(count({0, 1, 2, 3}), 4u);
  EXPECT_EQ(count({0, 2}), 2u);  // core 0 of package 0 and core 0 of package 1
}

TEST_F(FakeSysfs, TwoPackagesWithSiblingListsAreCountedApart) {
  // Package 0: cores 0,1 = cpus {0,4} {1,5}; package 1: cores 0,1 = cpus {2,6} {3,7}.
  const char* lists[] = {"0,4", "1,5", "2,6", "3,7", "0,4", "1,5", "2,6", "3,7"};
  for (size_t c = 0; c < 8; ++c) cpu(c, static_cast<int>((c % 4) / 2), static_cast<int>(c % 2), lists[c]);
  EXPECT_EQ(count({0, 1, 2, 3, 4, 5, 6, 7}), 4u);
  EXPECT_EQ(count({0, 2, 4, 6}), 2u);
}

TEST_F(FakeSysfs, ThreadSiblingsListServesWhenCoreCpusListIsMissing) {
  for (size_t c = 0; c < 4; ++c) write(c, "thread_siblings_list", c % 2 == 0 ? "0,2\n" : "1,3\n");
  EXPECT_EQ(count({0, 1, 2, 3}), 2u);
}

// One CPU's core_cpus_list is garbled: that method is dropped for all CPUs, the next one counts.
// Mixing methods per CPU would key cpu0 by {0,1} and cpu1 by (0,0) and count two cores.
TEST_F(FakeSysfs, AGarbledListFallsToTheNextMethodForEveryCpu) {
  cpu(0, 0, 0, "0-1");
  cpu(1, 0, 0, "0-1");
  write(1, "core_cpus_list", "zero\n");
  EXPECT_EQ(count({0, 1}), 1u);
  write(1, "thread_siblings_list", "1-0\n");  // descending range: garbled too
  EXPECT_EQ(count({0, 1}), 1u);               // (package, core) still says one core
}

TEST_F(FakeSysfs, GarbledOrMissingFilesFallBackToTheAllowedCount) {
  cpu(0, 0, 0, "0-3");
  cpu(1, 0, 0, "0-3");
  cpu(2, 0, 0, "0-3");
  // cpu3 has no topology directory at all: no method covers every CPU.
  EXPECT_EQ(count({0, 1, 2, 3}), 4u);
  EXPECT_EQ(count({0, 1, 2}), 1u);  // without cpu3 the tree is whole

  for (const char* bad : {"", "\n", "0,,1\n", "x\n", "-1\n", "0-\n", "3-1\n"}) {
    write(3, "core_cpus_list", bad);
    write(3, "thread_siblings_list", bad);
    write(3, "physical_package_id", "0\n");
    write(3, "core_id", "seven\n");
    EXPECT_EQ(count({0, 1, 2, 3}), 4u) << "list '" << bad << "'";
  }
  write(3, "core_id", "0\n");
  EXPECT_EQ(count({0, 1, 2, 3}), 1u);  // (package, core) of all four now readable: one core
}

TEST_F(FakeSysfs, AnEmptyTreeFallsBackToTheAllowedCount) {
  EXPECT_EQ(count({0, 1, 2}), 3u);
  EXPECT_EQ(physical_core_count((root_ / "missing").string(), {5, 7}), 2u);
}

TEST_F(FakeSysfs, NoAllowedCpusFallsBackToHardwareConcurrency) {
  cpu(0, 0, 0, "0");
  EXPECT_EQ(count({}), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(CpuTopology, ThisMachineHasBetweenOneAndAllLogicalCpus) {
  const size_t n = physical_core_count();
  EXPECT_GE(n, 1u);
  const unsigned hw = std::thread::hardware_concurrency();
  if (hw > 0) {
    EXPECT_LE(n, hw);
  }
  const std::vector<size_t> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  EXPECT_LE(n, allowed.size());
  EXPECT_TRUE(std::is_sorted(allowed.begin(), allowed.end()));
  // The process runs on the CPU it is on now, so that CPU is in the mask.
  const int here = sched_getcpu();
  if (here >= 0) {
    EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), static_cast<size_t>(here)));
  }
}

// The count's user: ThreadPool(0) (and so the engine's n_threads = 0) starts one thread per core.
TEST(CpuTopology, ThreadPoolZeroStartsOneThreadPerPhysicalCore) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.n_threads(), physical_core_count());
}

}  // namespace
}  // namespace alap
