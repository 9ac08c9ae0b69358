// Programmatic dependent launch (PDL) for the forward-pass kernels of ops.h: on CUDA sm_90 and
// newer a kernel launched with alap_launch may begin (launch, first weight loads) while the
// kernel before it on the stream finishes, which shortens the gap between the ~10 small kernels
// of every layer in a decode step. Each such kernel calls alap_pdl_wait() before it touches
// anything the kernel just before it writes, or anything it writes that the kernel before reads
// (that wait returns once the previous grid has finished and its writes are visible), then
// alap_pdl_release() so the next one may launch. What launches before that one wrote is complete
// when a kernel starts (the one before released it only after its own wait), so weights,
// constants and, by gpu_matmul's contract, a decode product's residual are read before the wait.
// On HIP and older NVIDIA devices both are no-ops and alap_launch is a plain launch.
// The decode attention kernels take their own flag instead (kAttnLaunchPdl, attn_k8.h: they stream
// older cache rows before their wait), which the decode step sets; it too is honoured only where
// pdl_enabled() holds.
#pragma once

#include <utility>

#include "kernels/gpu/gpu_port.h"

#if defined(__HIP__) || defined(__CUDACC__)

// Device side. Without the launch attribute griddepcontrol.wait returns at once.
__device__ __forceinline__ void alap_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void alap_pdl_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// The usual start of a kernel that reads its inputs right away.
__device__ __forceinline__ void alap_pdl_begin() {
  alap_pdl_wait();
  alap_pdl_release();
}

// L2 prefetch of one address (weights, which no kernel of a step writes, may be asked for before
// alap_pdl_wait()).
__device__ __forceinline__ void alap_prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
#else
  (void)p;
#endif
}

namespace alap::gpu {

// Whether alap_launch adds the PDL attribute: CUDA, the current device of compute capability 9.0
// or newer, and ALAP_GPU_PDL not "0" (decided once per process; ops_device.hip).
bool pdl_enabled();

// kernel<<<grid, block, smem, stream>>>(args...), as a programmatic dependent when pdl_enabled().
template <class... KernelArgs, class... Args>
void alap_launch(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, size_t smem, alap_gpu_stream_t stream,
                 Args&&... args) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  if (pdl_enabled()) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    ALAP_GPU_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
    return;
  }
#endif
  kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
}

}  // namespace alap::gpu

#endif
