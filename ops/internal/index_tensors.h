// Reading and writing the int32/int64 index tensors of the array kernels
// (perm, multiples, begin, axis, ...), and any kernel's scalar inputs, shared by the CPU kernels and the GPU
// kernels, which get these tensors in host memory (HostMemory args).
//
//   ASSIGN_OR_RETURN(std::vector<int64_t> perm,
//                    internal::ReadVector(ctx->input(1), "Transpose: perm"));
//   RETURN_IF_ERROR(internal::WriteInts(values, out));
//
// Errors: InvalidArgument naming `what` and the offending shape or dtype;
// Internal when a tensor is in device memory (a GPU KernelDef that forgot
// its HostMemory arg). Thread-safety: pure functions. No ownership taken.
// Internal to ops/.
#ifndef SLUICE_OPS_INTERNAL_INDEX_TENSORS_H_
#define SLUICE_OPS_INTERNAL_INDEX_TENSORS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The values of an int32 or int64 host tensor, widened; InvalidArgument for
// other dtypes.
absl::StatusOr<std::vector<int64_t>> ReadInts(const Tensor& t, absl::string_view what);
// As ReadInts, for a tensor that must be a vector.
absl::StatusOr<std::vector<int64_t>> ReadVector(const Tensor& t, absl::string_view what);
// As ReadInts, for a scalar (or one-element vector).
absl::StatusOr<int64_t> ReadScalar(const Tensor& t, absl::string_view what);
// The value of a scalar host tensor of T (the caller knows the dtype from
// the op's definition): InvalidArgument "<what> must be a scalar, got shape
// [2]" for any other rank.
template <typename T>
absl::StatusOr<const T*> ScalarOf(const Tensor& t, absl::string_view what) {
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a scalar, got shape ", t.shape().DebugString()));
  }
  return &t.scalar<T>();
}

// Writes `values` into the int32 or int64 host tensor `t` (of as many
// elements); InvalidArgument when a value does not fit in int32.
absl::Status WriteInts(absl::Span<const int64_t> values, Tensor* t);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_INDEX_TENSORS_H_
