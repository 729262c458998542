// CUDA and cuBLAS return codes as absl::Status.
//
//   RETURN_IF_ERROR(CudaStatus(cudaMemcpyAsync(...), "copying x to GPU:0"));
//   RETURN_IF_ERROR(CublasStatus(cublasSgemm(...), "MatMul dense/mm"));
//
// Out-of-memory codes map to ResourceExhausted, a missing device or driver
// to Unavailable, everything else to Internal; the message holds `what`, the
// CUDA error name and its text. A failure also clears the calling thread's
// last CUDA error, so that it is reported once.
#ifndef SLUICE_RUNTIME_GPU_CUDA_STATUS_H_
#define SLUICE_RUNTIME_GPU_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sluice {

absl::Status CudaStatus(cudaError_t code, absl::string_view what);
absl::Status CublasStatus(cublasStatus_t code, absl::string_view what);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_CUDA_STATUS_H_
