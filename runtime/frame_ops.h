// The runtime's internal ops: _Arg (a value handed into an executor run) and
// _Retval (a value handed out). The session rewrites fed tensors into _Arg
// nodes and fetched ones into _Retval nodes, so executors never name ops.
//
//   RETURN_IF_ERROR(RegisterFrameOps(&ops));
//   RegisterFrameKernels(&kernels);
//
// Thread-safe.
#ifndef SLUICE_RUNTIME_FRAME_OPS_H_
#define SLUICE_RUNTIME_FRAME_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

inline constexpr char kArgOp[] = "_Arg";        // attrs T: type, index: int
inline constexpr char kRetvalOp[] = "_Retval";  // attrs T: type, index: int

absl::Status RegisterFrameOps(OpRegistry* ops);
void RegisterFrameKernels(KernelRegistry* kernels);
// _Arg and _Retval for a device with device memory (GPU): the values stay in
// host memory (HostMemory output / input); the executor moves them. Only for
// `types`, those the device can hold: a fed or fetched value of another type
// (a string) gets its _Arg or _Retval on a device that can, instead of a
// transfer the device has no kernel for.
void RegisterHostMemoryFrameKernels(KernelRegistry* kernels, const std::string& device_type,
                                    const std::vector<DataType>& types);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FRAME_OPS_H_
