#include "runtime/gpu/cuda_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cublas_library.h"

namespace sluice {

absl::Status CudaStatus(cudaError_t code, absl::string_view what) {
  if (code == cudaSuccess) return absl::OkStatus();
  // A failed call also leaves its error as the thread's last one, which the
  // next launch check (cudaGetLastError) would report again, failing a
  // later, unrelated kernel. (A sticky error stays all the same.)
  (void)cudaGetLastError();
  std::string message = absl::StrCat(what, ": ", cudaGetErrorName(code), " (",
                                     cudaGetErrorString(code), ")");
  switch (code) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInitializationError:
    case cudaErrorStubLibrary:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorSystemNotReady:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::Status CublasStatus(cublasStatus_t code, absl::string_view what) {
  if (code == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  if (!CublasLoaded()) {
    const absl::Status load = LoadCublas();
    if (!load.ok()) return absl::Status(load.code(), absl::StrCat(what, ": ", load.message()));
  }
  std::string message = absl::StrCat(what, ": ", cublasGetStatusName(code), " (",
                                     cublasGetStatusString(code), ")");
  switch (code) {
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return absl::UnavailableError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace sluice
