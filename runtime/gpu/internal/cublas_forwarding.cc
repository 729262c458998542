// The cuBLAS functions Sluice calls, defined here so that no binary links
// libcublas: each forwards to the real function, found in the library
// opened on first use (cublas_library.h says why). Without the library each
// returns CUBLAS_STATUS_NOT_INITIALIZED; LoadCublas() has the reason.
//
// A new cuBLAS call in Sluice needs its forwarder here (the link fails
// without one, naming the function).
#include <cublas_v2.h>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cublas_library.h"
#include "runtime/gpu/internal/lazy_library.h"

namespace sluice {
namespace {

gpu_internal::LazyLibrary& Cublas() {
  static auto* library = new gpu_internal::LazyLibrary(
      absl::StrCat("libcublas.so.", CUBLAS_VER_MAJOR), SLUICE_CUDA_LIB_DIR);
  return *library;
}

template <typename Fn>
Fn* Find(const char* name) {
  return Cublas().Symbol<Fn>(name);
}

constexpr cublasStatus_t kMissing = CUBLAS_STATUS_NOT_INITIALIZED;

}  // namespace

absl::Status LoadCublas() { return Cublas().Load(); }
bool CublasLoaded() { return Cublas().loaded(); }

}  // namespace sluice

using sluice::Find;
using sluice::kMissing;

extern "C" {

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t* handle) {
  static auto* const real = Find<decltype(cublasCreate_v2)>("cublasCreate_v2");
  return real == nullptr ? kMissing : real(handle);
}

cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) {
  static auto* const real = Find<decltype(cublasDestroy_v2)>("cublasDestroy_v2");
  return real == nullptr ? kMissing : real(handle);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace,
                                                  size_t bytes) {
  static auto* const real = Find<decltype(cublasSetWorkspace_v2)>("cublasSetWorkspace_v2");
  return real == nullptr ? kMissing : real(handle, workspace, bytes);
}

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  static auto* const real = Find<decltype(cublasSetStream_v2)>("cublasSetStream_v2");
  return real == nullptr ? kMissing : real(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetPointerMode_v2(cublasHandle_t handle,
                                                    cublasPointerMode_t mode) {
  static auto* const real = Find<decltype(cublasSetPointerMode_v2)>("cublasSetPointerMode_v2");
  return real == nullptr ? kMissing : real(handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  static auto* const real = Find<decltype(cublasGetMathMode)>("cublasGetMathMode");
  return real == nullptr ? kMissing : real(handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  static auto* const real = Find<decltype(cublasSetMathMode)>("cublasSetMathMode");
  return real == nullptr ? kMissing : real(handle, mode);
}

const char* CUBLASWINAPI cublasGetStatusName(cublasStatus_t status) {
  static auto* const real = Find<decltype(cublasGetStatusName)>("cublasGetStatusName");
  return real == nullptr ? "CUBLAS_STATUS_NOT_INITIALIZED" : real(status);
}

const char* CUBLASWINAPI cublasGetStatusString(cublasStatus_t status) {
  static auto* const real = Find<decltype(cublasGetStatusString)>("cublasGetStatusString");
  return real == nullptr ? "the cuBLAS library could not be loaded" : real(status);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const float* a, int lda,
                                           const float* b, int ldb, const float* beta, float* c,
                                           int ldc) {
  static auto* const real = Find<decltype(cublasSgemm_v2)>("cublasSgemm_v2");
  return real == nullptr ? kMissing
                         : real(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                ldc);
}

cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void* alpha, const void* a, cudaDataType a_type,
                                         int lda, const void* b, cudaDataType b_type, int ldb,
                                         const void* beta, void* c, cudaDataType c_type, int ldc,
                                         cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  // cublas_api.h overloads cublasGemmEx in C++ (an inline for the older
  // cudaDataType compute types), so decltype cannot name this one.
  using GemmEx = cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                int, const void*, const void*, cudaDataType, int, const void*,
                                cudaDataType, int, const void*, void*, cudaDataType, int,
                                cublasComputeType_t, cublasGemmAlgo_t);
  static auto* const real = Find<GemmEx>("cublasGemmEx");
  return real == nullptr ? kMissing
                         : real(handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type,
                                ldb, beta, c, c_type, ldc, compute, algo);
}

cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* a, cudaDataType a_type, int lda, long long int stride_a,
    const void* b, cudaDataType b_type, int ldb, long long int stride_b, const void* beta, void* c,
    cudaDataType c_type, int ldc, long long int stride_c, int batch_count,
    cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  // Overloaded in C++ as cublasGemmEx is (see above).
  using GemmStridedBatchedEx =
      cublasStatus_t(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                     const void*, const void*, cudaDataType, int, long long int, const void*,
                     cudaDataType, int, long long int, const void*, void*, cudaDataType, int,
                     long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  static auto* const real = Find<GemmStridedBatchedEx>("cublasGemmStridedBatchedEx");
  return real == nullptr ? kMissing
                         : real(handle, transa, transb, m, n, k, alpha, a, a_type, lda, stride_a,
                                b, b_type, ldb, stride_b, beta, c, c_type, ldc, stride_c,
                                batch_count, compute, algo);
}

}  // extern "C"
