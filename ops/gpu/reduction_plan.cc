#include "ops/gpu/reduction_plan.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace internal {

absl::StatusOr<GpuReducePlan> MakeGpuReducePlan(const TensorShape& in,
                                                absl::Span<const int64_t> axes, bool keep_dims) {
  const int rank = in.rank();
  std::vector<bool> is_reduced(rank, false);
  for (const int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                     " for input of shape ", in.DebugString(),
                                                     " (rank ", rank, ")"));
    }
    is_reduced[a < 0 ? a + rank : a] = true;
  }
  GpuReducePlan plan;
  int64_t in_count = 1;
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dim(i);
    in_count *= d;
    if (is_reduced[i]) {
      plan.reduced_count *= d;
      if (keep_dims) plan.out_shape.AddDim(1);
    } else {
      plan.out_shape.AddDim(d);
      plan.out_count *= d;
    }
    if (d == 1) continue;
    const int kind = is_reduced[i] ? 1 : 0;
    if (kind == last_kind) {
      plan.groups.back() *= d;
    } else {
      if (plan.groups.empty()) plan.first_reduced = is_reduced[i];
      plan.groups.push_back(d);
      last_kind = kind;
    }
  }
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

}  // namespace internal
}  // namespace sluice
