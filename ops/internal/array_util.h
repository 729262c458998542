// Index and shape arithmetic shared by the array ops' shape functions, CPU
// kernels and gradients: StridedSlice planning, Reshape's -1 resolution,
// BroadcastGradientArgs' reduction axes, and axis/permutation checks.
//
//   ASSIGN_OR_RETURN(internal::StridedSlicePlan plan,
//                    internal::PlanStridedSlice(x.shape(), begin, end, strides, spec));
//   // plan.final_shape: the slice's shape; plan.begin/strides/processing_dims:
//   // what to read from each input dimension.
//   ASSIGN_OR_RETURN(TensorShape y, internal::ResolveReshape(x.shape(), {-1, 4}));
//
// Errors are InvalidArgument with a message naming the shapes involved.
// Thread-safety: pure functions. Internal to ops/.
#ifndef SLUICE_OPS_INTERNAL_ARRAY_UTIL_H_
#define SLUICE_OPS_INTERNAL_ARRAY_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"

namespace sluice {
namespace internal {

// "[1,2,3]".
std::string IntsDebugString(absl::Span<const int64_t> v);

// Maps axis in [-rank, rank) onto [0, rank). InvalidArgument "<what> <axis>
// is out of range [-rank, rank) for shape <shape>" otherwise.
absl::StatusOr<int64_t> CanonicalAxis(int64_t axis, int64_t rank, absl::string_view what,
                                      const TensorShape& shape);

// OK when `perm` is a permutation of 0..perm.size()-1; otherwise
// InvalidArgument "<what> [..] is not a permutation of 0..n-1".
absl::Status CheckPermutation(absl::Span<const int64_t> perm, absl::string_view what);

// StridedSlice's interpretation of begin/end/strides and the masks against
// an input shape (TensorFlow's ValidateStridedSliceOp).
struct StridedSliceSpec {
  int64_t begin_mask = 0;
  int64_t end_mask = 0;
  int64_t ellipsis_mask = 0;
  int64_t new_axis_mask = 0;
  int64_t shrink_axis_mask = 0;
};

struct StridedSlicePlan {
  // One entry per input dimension: where to start, the step, how many.
  std::vector<int64_t> begin;
  std::vector<int64_t> strides;
  std::vector<int64_t> processing_dims;  // -1 where unknown
  // The output shape (new axes added, shrunk axes removed).
  TensorShape final_shape;
  // True when the slice is the whole input, unchanged.
  bool is_identity = false;
};

// `begin`, `end` and `strides` hold the constant index inputs (all three the
// same length). `input_shape` must have a known rank; unknown dimensions give
// unknown output dimensions. InvalidArgument on a bad slice (zero stride,
// out-of-range shrink index, more indices than dimensions, two ellipses).
absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const TensorShape& input_shape,
                                                  absl::Span<const int64_t> begin,
                                                  absl::Span<const int64_t> end,
                                                  absl::Span<const int64_t> strides,
                                                  const StridedSliceSpec& spec);

// The rank of StridedSlice's output when only the number of index entries
// (`sparse_dims`) and the input rank are known, with the positions of new
// axes (size 1). InvalidArgument as above.
absl::StatusOr<TensorShape> StridedSliceShapeOfRank(int input_rank, int sparse_dims,
                                                    const StridedSliceSpec& spec);

// Reshape's target shape: `requested` may hold one -1, resolved against
// input_shape's number of elements (-1 when unknown). InvalidArgument naming both shapes when
// they cannot match.
absl::StatusOr<TensorShape> ResolveReshape(const TensorShape& input_shape,
                                           absl::Span<const int64_t> requested);

// The per-input reduction axes of BroadcastGradientArgs; InvalidArgument
// "Incompatible shapes: [2,3] vs. [4]".
absl::Status BroadcastReductionAxes(absl::Span<const int64_t> s0, absl::Span<const int64_t> s1,
                                    std::vector<int64_t>* r0, std::vector<int64_t>* r1);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_ARRAY_UTIL_H_
