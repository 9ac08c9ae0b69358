// kernels/gpu/blas_tensile.h: which Tensile library files count for a GPU architecture, and the
// folder rocBLAS reads them from, on folders this test makes (no GPU, no ROCm needed).
#include "kernels/gpu/blas_tensile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace alap::gpu {
namespace {

namespace fs = std::filesystem;

TEST(BlasTensile, ArchitectureBaseDropsTheFeatureFlags) {
  EXPECT_EQ(gpu_arch_base("gfx1100:sramecc-:xnack-"), "gfx1100");
  EXPECT_EQ(gpu_arch_base("gfx1103"), "gfx1103");
  EXPECT_EQ(gpu_arch_base(""), "");
}

TEST(BlasTensile, FileNamesMatchTheWholeArchitecture) {
  EXPECT_TRUE(tensile_file_for_arch("TensileLibrary_lazy_gfx1100.dat", "gfx1100"));
  EXPECT_TRUE(tensile_file_for_arch("TensileLibrary_Type_HH_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx1100.co", "gfx1100"));
  EXPECT_TRUE(tensile_file_for_arch("TensileLibrary_gfx1030_fallback.dat", "gfx1030"));
  EXPECT_TRUE(tensile_file_for_arch("TensileLibrary_gfx90a", "gfx90a"));
  // Another architecture whose name starts or ends the same way, or not a Tensile file at all.
  EXPECT_FALSE(tensile_file_for_arch("TensileLibrary_lazy_gfx1100.dat", "gfx110"));
  EXPECT_FALSE(tensile_file_for_arch("TensileLibrary_lazy_gfx1100.dat", "gfx1103"));
  EXPECT_FALSE(tensile_file_for_arch("TensileLibrary_lazy_gfx11000.dat", "gfx1100"));
  EXPECT_FALSE(tensile_file_for_arch("Kernels.so-000-gfx1100.hsaco", "gfx1100"));
  EXPECT_FALSE(tensile_file_for_arch("TensileLibrary.dat", "gfx1100"));
  EXPECT_FALSE(tensile_file_for_arch("TensileLibrary_lazy_gfx1100.dat", ""));
}

TEST(BlasTensile, FolderHoldsTheArchitectureOrNot) {
  std::string name("alap_tensile_");  // appended: GCC 12 -O3 warns falsely (-Wrestrict) on "…" + to_string
  name += std::to_string(::getpid());
  const fs::path dir = fs::temp_directory_path() / name;
  const fs::path lib = dir / "lib" / "rocblas" / "library";
  fs::create_directories(lib);
  for (const char* name : {"TensileLibrary_lazy_gfx1030.dat", "TensileLibrary_lazy_gfx1100.dat", "TensileManifest.txt"}) {
    std::ofstream(lib / name) << "x";
  }
  // The folder beside the library file, unless ROCBLAS_TENSILE_LIBPATH names one.
  const fs::path found = tensile_dir(nullptr, dir / "lib" / "librocblas.so.4");
  EXPECT_EQ(found, lib);
  EXPECT_EQ(tensile_dir("", dir / "lib" / "librocblas.so.4"), lib);
  EXPECT_EQ(tensile_dir("/elsewhere/library", dir / "lib" / "librocblas.so.4"), fs::path("/elsewhere/library"));
  EXPECT_TRUE(tensile_dir_has_arch(found, "gfx1100"));
  EXPECT_TRUE(tensile_dir_has_arch(found, "gfx1030"));
  EXPECT_FALSE(tensile_dir_has_arch(found, "gfx1103"));  // an RDNA3 laptop APU: rocBLAS would abort
  EXPECT_FALSE(tensile_dir_has_arch(found, "gfx1036"));
  EXPECT_FALSE(tensile_dir_has_arch(dir / "missing", "gfx1100"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace alap::gpu
