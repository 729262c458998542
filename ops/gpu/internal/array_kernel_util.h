// Helpers shared by the GPU array kernel files (ops/gpu/array_kernels.cc,
// ops/gpu/array_index_kernels.cc): the dtypes their device kernels serve,
// and the registration function of array_index_kernels.cc. Index tensors
// (host memory, HostMemory args) are read with ops/internal/index_tensors.h.
//
//   kernels->Register<MyGpuOp>(GpuKernel("Op").TypeConstraint("T", internal::GpuArrayTypes()));
//
// Thread-safety: pure functions. Internal to ops/gpu.
#ifndef SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_
#define SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_

#include <vector>

#include "graph/types.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace internal {

// The dtypes of the GPU array kernels: every fixed-size dtype but int32
// (float, double, half, bfloat16, int64, int16, int8, uint16, uint8, bool).
// int32 instances are the CPU kernels run on the host.
const std::vector<DataType>& GpuArrayTypes();

// Registers the GPU kernels of array_index_kernels.cc: Transpose, Tile,
// ConcatV2, Concat, Split, Pack, Unpack, Slice, StridedSlice,
// StridedSliceGrad, GatherV2, Gather, UnsortedSegmentSum.
void RegisterGpuIndexKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_
