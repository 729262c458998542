// NCCL, opened by the GPU backend only when an all-reduce needs it.
//
//   RETURN_IF_ERROR(LoadNccl());
//
// Like cuBLAS (cublas_library.h says how): Sluice links forwarding functions
// (runtime/gpu/internal/nccl_forwarding.cc) instead of libnccl, and the first
// call opens the library.
#ifndef SLUICE_RUNTIME_GPU_NCCL_LIBRARY_H_
#define SLUICE_RUNTIME_GPU_NCCL_LIBRARY_H_

#include "absl/status/status.h"

namespace sluice {

// Opens NCCL once; OK, or Unavailable naming the library and why.
absl::Status LoadNccl();

// Whether this process has opened NCCL (for tests and diagnostics).
bool NcclLoaded();

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GPU_NCCL_LIBRARY_H_
