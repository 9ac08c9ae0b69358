// Whether long prompts' weight products on the GPU take the vendor BLAS (cuBLAS, rocBLAS) and, when
// they do not, why. GpuForward decides (core/model/forward_gpu.h); ModelInfo carries it to the
// window's memory panel and to alap-cli.
#pragma once

namespace alap {

enum class GpuBlasUse {
  none,           // no layer runs on the GPU
  used,           // the BLAS passed its check and its workspace is in the device plan
  off,            // turned off (GpuForwardOptions::prefill_blas, or ALAP_GPU_PREFILL naming a kernel)
  not_built,      // the GPU library was built without one
  not_found,      // the BLAS library could not be opened (not installed, or not where it is looked for)
  unusable,       // it opened, but lacks kernels or an entry point for this GPU, failed its check, or
                  // refused a product
  no_memory,      // its workspace would cost a layer on the device, or the asked-for layers would not fit
  short_batches,  // prompts go in batches too short for it (the batch of layers left to the CPU)
};

// "none", "used", "off", "not_built", "not_found", "unusable", "no_memory", "short_batches".
inline const char* gpu_blas_use_name(GpuBlasUse u) {
  switch (u) {
    case GpuBlasUse::none: return "none";
    case GpuBlasUse::used: return "used";
    case GpuBlasUse::off: return "off";
    case GpuBlasUse::not_built: return "not_built";
    case GpuBlasUse::not_found: return "not_found";
    case GpuBlasUse::unusable: return "unusable";
    case GpuBlasUse::no_memory: return "no_memory";
    case GpuBlasUse::short_batches: return "short_batches";
  }
  return "none";
}

}  // namespace alap
