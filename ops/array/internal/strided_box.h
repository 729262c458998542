// A strided box of a dense tensor's bytes: gathered into a contiguous
// buffer (StridedSlice) or written back from one (StridedSliceGrad, the
// slice assignments), and a value broadcast to a shape, the bytes an
// assignment writes. Element types of 1, 2, 4, 8 or 16 bytes; strings are
// the callers' to move.
//
//   internal::StridedBoxCopy<false>(x, x_dims, begin, strides, box, out, esize);  // gather
//   ASSIGN_OR_RETURN(Tensor v, internal::BroadcastValue(value, slice_shape, "StridedSliceAssign"));
//   internal::StridedBoxCopy<true>(var, var_dims, begin, strides, box, v_bytes, esize);
//
// Thread-compatible: no state. Internal to ops/.
#ifndef SLUICE_OPS_ARRAY_INTERNAL_STRIDED_BOX_H_
#define SLUICE_OPS_ARRAY_INTERNAL_STRIDED_BOX_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// The box of `box_dims` elements of a tensor of `full_dims`, starting at
// `begin` and stepping `strides` (possibly negative) per dimension: gathered
// into the contiguous `compact` (Scatter = false), or written back from it.
template <bool Scatter>
void StridedBoxCopy(char* full, absl::Span<const int64_t> full_dims,
                    absl::Span<const int64_t> begin, absl::Span<const int64_t> strides,
                    absl::Span<const int64_t> box_dims, char* compact, size_t esize);

extern template void StridedBoxCopy<false>(char*, absl::Span<const int64_t>,
                                           absl::Span<const int64_t>, absl::Span<const int64_t>,
                                           absl::Span<const int64_t>, char*, size_t);
extern template void StridedBoxCopy<true>(char*, absl::Span<const int64_t>,
                                          absl::Span<const int64_t>, absl::Span<const int64_t>,
                                          absl::Span<const int64_t>, char*, size_t);

// `value` broadcast to `shape` (numpy rules: aligned at the right, a
// dimension of 1 repeats); the value itself when it already has the shape.
// InvalidArgument naming `op` and both shapes when it does not broadcast.
// Fixed-size element types only.
absl::StatusOr<Tensor> BroadcastValue(const Tensor& value, const TensorShape& shape,
                                      absl::string_view op);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_INTERNAL_STRIDED_BOX_H_
