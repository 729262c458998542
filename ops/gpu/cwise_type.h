// The element-wise CUDA kernels' type (ops/gpu/cwise.cu.h) of a tensor's
// dtype, for kernels that launch them (the element-wise ops, the GPU
// TensorArray's add).
//
//   ASSIGN_OR_RETURN(gpu::CwiseType type, CwiseTypeOf(t.dtype()));
//
// InvalidArgument naming the type for one the kernels do not take. A pure
// function: thread-safe.
#ifndef SLUICE_OPS_GPU_CWISE_TYPE_H_
#define SLUICE_OPS_GPU_CWISE_TYPE_H_

#include "absl/status/statusor.h"
#include "graph/types.h"
#include "ops/gpu/cwise.cu.h"

namespace sluice {

absl::StatusOr<gpu::CwiseType> CwiseTypeOf(DataType dtype);

}  // namespace sluice

#endif  // SLUICE_OPS_GPU_CWISE_TYPE_H_
