// Whether rocBLAS has kernels for a GPU, asked before rocBLAS itself is: plain C++, shared by
// matmul_blas.hip and its host test (tests/kernels/gpu/blas_tensile_test).
//
// rocBLAS keeps its GEMM kernels per GPU architecture in Tensile library files (ROCm 6:
// <the folder of librocblas>/rocblas/library/TensileLibrary_lazy_gfx1100.dat and code objects
// named after the architecture; ROCBLAS_TENSILE_LIBPATH names another folder). When the GPU's
// architecture has none, rocBLAS does not return an error: it prints "Cannot read
// TensileLibrary.dat ... for GPU arch" and aborts the process (ROCm/rocBLAS issues 1267 and 1339,
// llama.cpp issue 14421 on a gfx1036 iGPU). So the library opens rocBLAS only when that folder
// holds a Tensile file for the device's architecture (an RDNA3 laptop APU such as gfx1103 has none
// in ROCm 6's packages; with HSA_OVERRIDE_GFX_VERSION it reports the architecture it borrows).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace alap::gpu {

// The architecture part of a device's gcnArchName: "gfx1100:sramecc-:xnack-" → "gfx1100".
inline std::string gpu_arch_base(std::string_view gcn_arch_name) {
  return std::string(gcn_arch_name.substr(0, gcn_arch_name.find(':')));
}

// Whether `name` is a Tensile library file for `arch`: it starts with "TensileLibrary" and holds
// "_<arch>" followed by '.', '_' or its end (so gfx110 does not match gfx1100's files).
inline bool tensile_file_for_arch(std::string_view name, std::string_view arch) {
  if (arch.empty() || name.substr(0, 14) != "TensileLibrary") return false;
  std::string token("_");  // appended, not "_" + ...: GCC 12 -O3 warns falsely (-Wrestrict) on that
  token += arch;
  for (size_t at = name.find(token); at != std::string_view::npos; at = name.find(token, at + 1)) {
    const size_t end = at + token.size();
    if (end == name.size() || name[end] == '.' || name[end] == '_') return true;
  }
  return false;
}

// Whether folder `dir` holds a Tensile library file for `arch` (false when it cannot be read).
inline bool tensile_dir_has_arch(const std::filesystem::path& dir, std::string_view arch) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (tensile_file_for_arch(it->path().filename().string(), arch)) return true;
  }
  return false;
}

// The folder rocBLAS reads its Tensile files from: ROCBLAS_TENSILE_LIBPATH when set (non-empty),
// else <folder of the librocblas file>/rocblas/library.
inline std::filesystem::path tensile_dir(const char* env_libpath, const std::filesystem::path& rocblas_file) {
  if (env_libpath != nullptr && *env_libpath != '\0') return env_libpath;
  return rocblas_file.parent_path() / "rocblas" / "library";
}

}  // namespace alap::gpu
