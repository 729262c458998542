// cuBLASLt, opened by the GPU backend only when a kernel first asks for it:
// the matrix products with a fused epilogue (bias, ReLU, bias gradient)
// that plain cuBLAS cannot express.
//
//   ASSIGN_OR_RETURN(const CublasLtApi* lt, LoadCublasLt());
//   cublasLtMatmulDesc_t desc;
//   if (lt->matmul_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != ...) ...
//
// Unlike cuBLAS (cublas_library.h), whose functions Sluice calls by their own
// names through forwarders, cuBLASLt is reached through this table of
// function pointers: libcublas itself calls cuBLASLt functions
// (cublasLtMatmul among them), and a forwarder of the same name in this
// process would be bound to those calls in its place.
//
// Thread-safe; the table lives as long as the process.
#ifndef SLUICE_RUNTIME_GPU_CUBLASLT_LIBRARY_H_
#define SLUICE_RUNTIME_GPU_CUBLASLT_LIBRARY_H_

#include <cublasLt.h>

#include "absl/status/statusor.h"

namespace sluice {

// The cuBLASLt functions Sluice calls.
struct CublasLtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// Opens cuBLASLt once and finds every function above: the table, or
// Unavailable naming the library (or the missing function) and why. The
// same answer on every call.
absl::StatusOr<const CublasLtApi*> LoadCublasLt();

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_CUBLASLT_LIBRARY_H_
