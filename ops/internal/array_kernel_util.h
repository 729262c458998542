// Helpers shared by the array ops' CPU kernel files (array_kernels.cc,
// slice_kernels.cc): reading and writing int32/int64 index tensors, the
// dtypes the byte-moving kernels accept, element-size dispatch, and the
// registration function of slice_kernels.cc.
//
//   ASSIGN_OR_RETURN(std::vector<int64_t> perm,
//                    internal::ReadVector(ctx->input(1), "Transpose: perm"));
//   internal::DispatchBySize(esize, [&](auto tag) {
//     using U = typename decltype(tag)::type;  // uint8_t .. uint64_t
//   });
//
// Errors: InvalidArgument naming `what` and the offending shape or dtype.
// Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_INTERNAL_ARRAY_KERNEL_UTIL_H_
#define SLUICE_OPS_INTERNAL_ARRAY_KERNEL_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
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

// Every fixed-size dtype: the byte-moving kernels serve all of them.
const std::vector<DataType>& AllTypes();

// The values of an int32 or int64 tensor, widened; InvalidArgument for other
// dtypes.
absl::StatusOr<std::vector<int64_t>> ReadInts(const Tensor& t, absl::string_view what);
// As ReadInts, for a tensor that must be a vector.
absl::StatusOr<std::vector<int64_t>> ReadVector(const Tensor& t, absl::string_view what);
// As ReadInts, for a scalar (or one-element vector).
absl::StatusOr<int64_t> ReadScalar(const Tensor& t, absl::string_view what);
// Writes `values` into the int32 or int64 tensor `t` (of as many elements);
// InvalidArgument when a value does not fit in int32.
absl::Status WriteInts(absl::Span<const int64_t> values, Tensor* t);

// The product of dims[begin, end).
int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end);

// Calls f(std::type_identity<U>{}) with an unsigned integer type U of the
// element size, so element copies compile to plain loads and stores.
template <typename F>
void DispatchBySize(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      f(std::type_identity<uint8_t>{});
      break;
    case 2:
      f(std::type_identity<uint16_t>{});
      break;
    case 4:
      f(std::type_identity<uint32_t>{});
      break;
    default:
      f(std::type_identity<uint64_t>{});
      break;
  }
}

// A factory of default-constructed K kernels.
template <typename K>
KernelFactory Make() {
  return [] { return std::make_unique<K>(); };
}

// Registers the kernels of slice_kernels.cc: Slice, StridedSlice,
// StridedSliceGrad, GatherV2, Gather, UnsortedSegmentSum, Tile, Transpose.
void RegisterSliceKernels(KernelRegistry* kernels);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_ARRAY_KERNEL_UTIL_H_
