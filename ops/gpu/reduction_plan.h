// Host-side index math of the GPU reductions: the input's dimensions merged
// into alternating kept / reduced groups, and the cheapest view of them.
//
//   ASSIGN_OR_RETURN(internal::GpuReducePlan plan,
//                    internal::MakeGpuReducePlan(x.shape(), {1}, /*keep_dims=*/false));
//   // x [8, 16, 4] over {1}: kind kThreeD, outer 8, reduced 16, inner 4,
//   // out_shape [8, 4].
//
// Dimensions of size 1 are dropped before merging (they never change where
// the data sit): reducing [4, 1, 6] over {1, 2} is a row reduction of
// [4, 6]. Plain functions of their arguments: thread-safe, no ownership.
#ifndef SLUICE_OPS_GPU_REDUCTION_PLAN_H_
#define SLUICE_OPS_GPU_REDUCTION_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"
#include "ops/math/internal/math_kernel_checks.h"

namespace sluice {
namespace internal {

struct GpuReducePlan {
  enum class Kind {
    kIdentity,  // only size-1 dimensions are reduced: the output is the input reshaped
    kEmpty,     // the input has no elements: every output element reduces nothing
    kThreeD,    // the input is [outer, reduced, inner], the output [outer, inner]
    kGeneral,   // anything else: see groups
  };
  Kind kind = Kind::kIdentity;
  TensorShape out_shape;      // keep_dims applied
  int64_t out_count = 1;      // elements of out_shape
  int64_t reduced_count = 1;  // input elements per output element (0 when one is empty)
  // The non-size-1 dimensions merged into runs of kept and reduced ones, in
  // order; groups[0] is reduced when first_reduced.
  std::vector<int64_t> groups;
  bool first_reduced = false;
  int64_t outer = 1, reduced = 1, inner = 1;  // kThreeD only
};

// InvalidArgument naming the axis and the shape when an axis is outside
// [-rank, rank). Repeated axes count once, as on the CPU.
// The launch view of groups already made (ReduceOp's shell makes them).
GpuReducePlan PlanGpuReduction(ReductionGroups groups);

absl::StatusOr<GpuReducePlan> MakeGpuReducePlan(const TensorShape& in,
                                                absl::Span<const int64_t> axes, bool keep_dims);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_REDUCTION_PLAN_H_
