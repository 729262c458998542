#include "ops/gpu/reduction_plan.h"

#include <utility>

#include "base/status_macros.h"
#include "ops/math/internal/math_kernel_checks.h"

namespace sluice {
namespace internal {

GpuReducePlan PlanGpuReduction(ReductionGroups groups) {
  GpuReducePlan plan;
  plan.out_shape = std::move(groups.out_shape);
  plan.out_count = groups.out_count;
  plan.reduced_count = groups.reduced_count;
  plan.groups = std::move(groups.groups);
  plan.first_reduced = groups.first_reduced;
  const int64_t in_count = plan.out_count * plan.reduced_count;
  const size_t n = plan.groups.size();
  using Kind = GpuReducePlan::Kind;
  if (in_count == 0) {
    plan.kind = Kind::kEmpty;
  } else if (n == 0 || (n == 1 && !plan.first_reduced)) {
    plan.kind = Kind::kIdentity;
  } else if (n <= 3 && (plan.first_reduced ? n <= 2 : n >= 2)) {
    // [R], [R, K], [K, R] or [K, R, K].
    plan.kind = Kind::kThreeD;
    size_t k = 0;
    if (!plan.first_reduced) plan.outer = plan.groups[k++];
    plan.reduced = plan.groups[k++];
    if (k < n) plan.inner = plan.groups[k];
  } else {
    plan.kind = Kind::kGeneral;
  }
  return plan;
}

absl::StatusOr<GpuReducePlan> MakeGpuReducePlan(const TensorShape& in,
                                                absl::Span<const int64_t> axes, bool keep_dims) {
  ASSIGN_OR_RETURN(ReductionGroups groups, GroupReduction(in, axes, keep_dims));
  return PlanGpuReduction(std::move(groups));
}

}  // namespace internal
}  // namespace sluice
