// core/runtime/cpu_topology: physical cores counted on fake sysfs trees (SMT siblings, affinity
// subsets, two packages, each of the three ways to name a core, garbled files, hybrid P-/E-core
// parts), and on this machine.
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

// A temporary directory standing for /sys/devices (CPUs in system/cpu/, the hybrid lists in
// cpu_core/ and cpu_atom/), removed at the end of the test.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("alap_cpu_topology_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(cpu_dir());
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(size_t cpu, const std::string& file, const std::string& text) {
    const fs::path dir = cpu_dir() / ("cpu" + std::to_string(cpu)) / "topology";
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
  // A hybrid part's lists of P-core and E-core CPUs (only cpu_core/cpus is read).
  void hybrid(const std::string& p_cpus, const std::string& e_cpus) {
    fs::create_directories(root_ / "cpu_core");
    fs::create_directories(root_ / "cpu_atom");
    std::ofstream(root_ / "cpu_core" / "cpus") << p_cpus;
    std::ofstream(root_ / "cpu_atom" / "cpus") << e_cpus;
  }
  // 4 P-cores with SMT (cpu0-7, siblings next to each other) and 8 E-cores (cpu8-15), numbered as
  // Linux does on a 12th-14th gen Intel laptop; 12 physical cores in all.
  void four_p_cores_eight_e_cores() {
    for (size_t c = 0; c < 8; ++c) {
      const size_t first = c / 2 * 2;
      const std::string siblings = std::to_string(first) + "-" + std::to_string(first + 1);
      cpu(c, 0, static_cast<int>(first * 4), siblings);
    }
    for (size_t c = 8; c < 16; ++c) cpu(c, 0, static_cast<int>(c + 24), std::to_string(c));
  }
  fs::path cpu_dir() const { return root_ / "system" / "cpu"; }
  size_t count(const std::vector<size_t>& allowed) const {
    return physical_core_count(cpu_dir().string(), root_.string(), allowed);
  }

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
  const std::string missing = (root_ / "missing").string();
  EXPECT_EQ(physical_core_count(missing, missing, {5, 7}), 2u);
}

TEST_F(FakeSysfs, NoAllowedCpusFallsBackToHardwareConcurrency) {
  cpu(0, 0, 0, "0");
  EXPECT_EQ(count({}), std::max(1u, std::thread::hardware_concurrency()));
}

const std::vector<size_t> kAll16 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
const std::vector<size_t> kECores = {8, 9, 10, 11, 12, 13, 14, 15};

TEST_F(FakeSysfs, HybridPartCountsOnlyItsPCores) {
  four_p_cores_eight_e_cores();
  hybrid("0-7\n", "8-15\n");
  EXPECT_EQ(count(kAll16), 4u);
  EXPECT_EQ(count({0, 2, 4, 6, 8, 9, 10, 11, 12, 13, 14, 15}), 4u);  // one sibling of each P-core
  EXPECT_EQ(count({0, 1, 8, 9}), 1u);  // P and E allowed: one P-core (both siblings)
}

TEST_F(FakeSysfs, HybridPartAllowedOnlyOnECoresCountsThem) {
  four_p_cores_eight_e_cores();
  hybrid("0-7\n", "8-15\n");
  EXPECT_EQ(count(kECores), 8u);
  EXPECT_EQ(count({9, 12, 15}), 3u);
}

TEST_F(FakeSysfs, HybridPartAllowedOnlyOnPCoresCountsThem) {
  four_p_cores_eight_e_cores();
  hybrid("0-7\n", "8-15\n");
  EXPECT_EQ(count({0, 1, 2, 3, 4, 5, 6, 7}), 4u);
  EXPECT_EQ(count({0, 1, 2, 4}), 3u);
}

TEST_F(FakeSysfs, WithoutACpuCoreListEveryCoreCounts) {
  four_p_cores_eight_e_cores();
  EXPECT_EQ(count(kAll16), 12u);
  fs::create_directories(root_ / "cpu_core");  // the directory without its cpus file: the same
  EXPECT_EQ(count(kAll16), 12u);
}

TEST_F(FakeSysfs, AGarbledCpuCoreListIsIgnored) {
  four_p_cores_eight_e_cores();
  for (const char* bad : {"", "\n", "0,,7\n", "zero-seven\n", "7-0\n", "-1\n", "0-7 8\n"}) {
    hybrid(bad, "8-15\n");
    EXPECT_EQ(count(kAll16), 12u) << "cpu_core/cpus '" << bad << "'";
  }
  hybrid("0-7\n", "8-15\n");
  EXPECT_EQ(count(kAll16), 4u);  // the same tree with a well-formed list
}

// A list naming CPUs that have no directory (offline, or a list for more CPUs than exist): only
// its ids among the allowed CPUs matter.
TEST_F(FakeSysfs, ACpuCoreListNamingMissingCpusUsesTheAllowedOnesInIt) {
  four_p_cores_eight_e_cores();
  hybrid("0-7,100-103\n", "8-15\n");
  EXPECT_EQ(count(kAll16), 4u);   // P-cores among the allowed CPUs: the P count
  hybrid("0-63\n", "");
  EXPECT_EQ(count(kAll16), 12u);  // every allowed CPU in the list: no split, today's count
  hybrid("100-103\n", "");
  EXPECT_EQ(count(kAll16), 12u);  // none in it: no split either
}

// Topology files unreadable on a hybrid part: the fallback counts the allowed P-core CPUs.
TEST_F(FakeSysfs, HybridPartWithoutTopologyFallsBackToItsPCoreCpus) {
  hybrid("0-7\n", "8-15\n");
  EXPECT_EQ(count(kAll16), 8u);
  EXPECT_EQ(count(kECores), 8u);
  EXPECT_EQ(count({0, 1, 8}), 2u);
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
