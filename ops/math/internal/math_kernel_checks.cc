// Checks and output shapes of the math kernels (see math_kernel_checks.h).
#include "ops/math/internal/math_kernel_checks.h"

#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/types.h"

namespace sluice {
namespace internal {
namespace {

// The values of an int32 or int64 host tensor.
std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> values(t.NumElements());
  for (int64_t k = 0; k < t.NumElements(); ++k) {
    values[k] = t.dtype() == DT_INT64 ? t.data<int64_t>()[k] : int64_t{t.data<int32_t>()[k]};
  }
  return values;
}

}  // namespace

absl::StatusOr<MatMulDims> CheckMatMulShapes(const Tensor& a, const Tensor& b, bool transpose_a,
                                             bool transpose_b, absl::string_view library) {
  if (a.dims() != 2 || b.dims() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul needs two matrices, got shapes ",
                                                   a.shape().DebugString(), " and ",
                                                   b.shape().DebugString()));
  }
  MatMulDims d;
  d.m = a.dim_size(transpose_a ? 1 : 0);
  d.k = a.dim_size(transpose_a ? 0 : 1);
  const int64_t kb = b.dim_size(transpose_b ? 1 : 0);
  d.n = b.dim_size(transpose_b ? 0 : 1);
  if (d.k != kb) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Matrix size-incompatible: In[0]: ", a.shape().DebugString(), " (transpose_a=", transpose_a,
        "), In[1]: ", b.shape().DebugString(), " (transpose_b=", transpose_b, ")"));
  }
  constexpr int64_t kMaxDim = std::numeric_limits<int>::max();
  if (d.m > kMaxDim || d.n > kMaxDim || d.k > kMaxDim || a.dim_size(1) > kMaxDim ||
      b.dim_size(1) > kMaxDim) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul dimensions exceed the ", library,
                                                   " limit: ", a.shape().DebugString(), " x ",
                                                   b.shape().DebugString()));
  }
  return d;
}

absl::Status CheckAddNShapes(const OpKernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  for (int k = 1; k < ctx.num_inputs(); ++k) {
    if (ctx.input(k).shape() != first.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AddN inputs must have the same shape: input 0 has shape ", first.shape().DebugString(),
          ", input ", k, " has shape ", ctx.input(k).shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SelectCondition> CheckSelectShapes(const Tensor& cond, const Tensor& t,
                                                  const Tensor& e) {
  if (t.shape() != e.shape()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'t' and 'e' must have the same shape: ", t.shape().DebugString(), " vs. ",
                     e.shape().DebugString()));
  }
  if (cond.dims() == 0) return SelectCondition::kScalar;
  const bool same = cond.shape() == t.shape();
  const bool rows = cond.dims() == 1 && t.dims() >= 2 && cond.dim_size(0) == t.dim_size(0);
  if (!same && !rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("condition of shape ", cond.shape().DebugString(),
                     " must be a scalar, have the shape of t and e ", t.shape().DebugString(),
                     ", or be a vector of their first dimension"));
  }
  return same ? SelectCondition::kSame : SelectCondition::kRows;
}

absl::StatusOr<std::vector<int64_t>> ReadReductionAxes(const Tensor& axes) {
  if (axes.dims() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reduction axes must be a scalar or vector, got shape ", axes.shape().DebugString()));
  }
  return IndexValues(axes);
}

absl::StatusOr<ReductionGroups> GroupReduction(const TensorShape& in,
                                               absl::Span<const int64_t> axes, bool keep_dims) {
  const int rank = in.rank();
  std::vector<bool> reduced(rank, false);
  for (const int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return absl::InvalidArgumentError(absl::StrCat("Invalid reduction dimension ", a,
                                                     " for input of shape ", in.DebugString(),
                                                     " (rank ", rank, ")"));
    }
    reduced[a < 0 ? a + rank : a] = true;
  }
  ReductionGroups plan;
  int last_kind = -1;  // 0 kept, 1 reduced
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dim(i);
    if (reduced[i]) {
      plan.reduced_count *= d;
      if (keep_dims) plan.out_shape.AddDim(1);
    } else {
      plan.out_shape.AddDim(d);
      plan.out_count *= d;
    }
    if (d == 1) continue;
    const int kind = reduced[i] ? 1 : 0;
    if (kind == last_kind) {
      plan.groups.back() *= d;
    } else {
      if (plan.groups.empty()) plan.first_reduced = reduced[i];
      plan.groups.push_back(d);
      last_kind = kind;
    }
  }
  return plan;
}

absl::StatusOr<ArgMaxPlan> PlanArgMax(absl::string_view op, const Tensor& x,
                                      const Tensor& dimension) {
  if (dimension.NumElements() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension must be a scalar, got shape ", dimension.shape().DebugString()));
  }
  int64_t dim = IndexValues(dimension)[0];
  const int rank = x.dims();
  if (dim < -rank || dim >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " dimension ", dim, " is out of range for input of shape ", x.shape().DebugString()));
  }
  if (dim < 0) dim += rank;
  ArgMaxPlan plan;
  plan.dim = dim;
  plan.n = x.dim_size(static_cast<int>(dim));
  if (plan.n == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " over dimension ", dim, " of size 0 (input shape ", x.shape().DebugString(), ")"));
  }
  plan.out_shape = x.shape();
  plan.out_shape.RemoveDim(static_cast<int>(dim));
  for (int i = 0; i < dim; ++i) plan.outer *= x.dim_size(i);
  for (int i = static_cast<int>(dim) + 1; i < rank; ++i) plan.inner *= x.dim_size(i);
  return plan;
}

}  // namespace internal
}  // namespace sluice
