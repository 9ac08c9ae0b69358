/* A stand-in vendor BLAS for `ops_gpu_test --blas-refused` (run_ops_h200.sh): the library opens it
 * through ALAP_GPU_BLAS_LIBRARY and must refuse it, because its GEMM answers wrongly (writes nothing;
 * ALAP_FAKE_BLAS=wrong) or fails (any other value). Every other call succeeds. It exports cuBLAS's
 * and rocBLAS's names, so the same file stands in for either; enums are passed as int. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int handle_storage;

static int gemm_status(void) {
  const char* mode = getenv("ALAP_FAKE_BLAS");
  return mode != NULL && strcmp(mode, "wrong") == 0 ? 0 : 13; /* 13: cuBLAS's execution failed */
}

int cublasCreate_v2(void** handle) {
  *handle = &handle_storage;
  return 0;
}
int cublasSetStream_v2(void* handle, void* stream) {
  (void)stream; /* any stream, the default one (null) included */
  return handle != NULL ? 0 : 1;
}
int cublasSetWorkspace_v2(void* handle, void* workspace, size_t bytes) {
  return handle != NULL && (workspace != NULL || bytes == 0) ? 0 : 1;
}
int cublasGemmEx(void* handle, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int at, int lda,
                 const void* b, int bt, int ldb, const void* beta, void* c, int ct, int ldc, int compute, int algo) {
  (void)handle, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)at, (void)lda, (void)b;
  (void)bt, (void)ldb, (void)beta, (void)c, (void)ct, (void)ldc, (void)compute, (void)algo;
  return gemm_status();
}

int rocblas_create_handle(void** handle) { return cublasCreate_v2(handle); }
int rocblas_set_stream(void* handle, void* stream) { return cublasSetStream_v2(handle, stream); }
int rocblas_set_workspace(void* handle, void* workspace, size_t bytes) {
  return cublasSetWorkspace_v2(handle, workspace, bytes);
}
int rocblas_gemm_ex(void* handle, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int at,
                    int lda, const void* b, int bt, int ldb, const void* beta, const void* c, int ct, int ldc, void* d,
                    int dt, int ldd, int compute, int algo, int32_t solution, uint32_t flags) {
  (void)handle, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)at, (void)lda, (void)b;
  (void)bt, (void)ldb, (void)beta, (void)c, (void)ct, (void)ldc, (void)d, (void)dt, (void)ldd, (void)compute;
  (void)algo, (void)solution, (void)flags;
  return gemm_status();
}
