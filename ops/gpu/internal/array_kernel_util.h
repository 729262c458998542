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

// Which CPU kernels KernelRegistry::RegisterHostKernels copies to the GPU:
// OnlyInt32, a kernel whose every type constraint is exactly {int32}
// (Add<int32>, Less<int32>, Sum<int32>, ...); ServesInt32, a kernel serving
// int32 among other types (the byte movers' `T in {every fixed-size
// type}`), whose GPU copy matches those other types too, so it is
// registered after the device kernels, which serve all of them but int32,
// and only int32 nodes fall through to it; OnlyString, a kernel whose every
// type constraint is exactly {string} (a string Const); ServesResource, a
// kernel whose every type constraint includes resource handles (Identity
// of a handle); AnyKernel, every kernel.
bool OnlyInt32(const KernelDef& def);
bool OnlyString(const KernelDef& def);
bool ServesInt32(const KernelDef& def);
bool ServesResource(const KernelDef& def);
bool AnyKernel(const KernelDef& def);

// Registers the GPU kernels of array_index_kernels.cc: Transpose, Tile,
// ConcatV2, Concat, Split, Pack, Unpack, Slice, StridedSlice,
// StridedSliceGrad, GatherV2, Gather, ResourceGather, UnsortedSegmentSum.
void RegisterGpuIndexKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_
