// Helpers shared by the GPU array kernel files (ops/gpu/array_kernels.cc,
// ops/gpu/array_index_kernels.cc): the dtypes their device kernels serve,
// reading and writing the int32/int64 index tensors they get in host memory
// (HostMemory args), and the registration function of
// array_index_kernels.cc.
//
//   ASSIGN_OR_RETURN(std::vector<int64_t> perm,
//                    internal::ReadHostVector(ctx->input(1), "Transpose: perm"));
//
// Errors: InvalidArgument naming `what` and the offending shape or dtype;
// Internal when an index tensor is in device memory (a KernelDef that
// forgot its HostMemory arg). Thread-safety: pure functions. Internal to
// ops/gpu.
#ifndef SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_
#define SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/types.h"
#include "runtime/kernel_registry.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The dtypes of the GPU array kernels: every fixed-size dtype but int32
// (float, double, half, bfloat16, int64, int16, int8, uint16, uint8, bool).
// int32 instances are the CPU kernels run on the host.
const std::vector<DataType>& GpuArrayTypes();

// The values of an int32 or int64 tensor in host memory, widened.
absl::StatusOr<std::vector<int64_t>> ReadHostInts(const Tensor& t, absl::string_view what);
// As ReadHostInts, for a tensor that must be a vector.
absl::StatusOr<std::vector<int64_t>> ReadHostVector(const Tensor& t, absl::string_view what);
// As ReadHostInts, for a scalar (or one-element vector).
absl::StatusOr<int64_t> ReadHostScalar(const Tensor& t, absl::string_view what);
// Writes `values` into the int32 or int64 host tensor `t` (of as many
// elements); InvalidArgument when a value does not fit in int32.
absl::Status WriteHostInts(absl::Span<const int64_t> values, Tensor* t);

// Registers the GPU kernels of array_index_kernels.cc: Transpose, Tile,
// ConcatV2, Concat, Split, Pack, Unpack, Slice, StridedSlice,
// StridedSliceGrad, GatherV2, Gather, UnsortedSegmentSum.
void RegisterGpuIndexKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_ARRAY_KERNEL_UTIL_H_
