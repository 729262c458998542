// cuBLAS, opened by the GPU backend only when it needs it.
//
//   RETURN_IF_ERROR(LoadCublas());   // before the first cuBLAS handle
//
// Sluice's GPU code calls cuBLAS by its usual names, but links forwarding
// functions (runtime/gpu/internal/cublas_forwarding.cc) instead of libcublas:
// the first call opens the library (dlopen) and finds the function. A
// CPU-only process (a parameter server, a runner without a GPU) thus never
// maps cuBLAS or cuBLASLt and starts as fast and as small as one built without
// CUDA. cudart stays linked: it is small, and opens the driver only when
// first asked.
//
// Without the library every forwarded function returns
// CUBLAS_STATUS_NOT_INITIALIZED, and LoadCublas() says why.
#ifndef SLUICE_RUNTIME_GPU_CUBLAS_LIBRARY_H_
#define SLUICE_RUNTIME_GPU_CUBLAS_LIBRARY_H_

#include "absl/status/status.h"

namespace sluice {

// Opens cuBLAS (and, through it, cuBLASLt) once; OK, or Unavailable naming
// the library and why. The same answer on every call.
absl::Status LoadCublas();

// Whether this process has opened cuBLAS (for tests and diagnostics).
bool CublasLoaded();

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_CUBLAS_LIBRARY_H_
