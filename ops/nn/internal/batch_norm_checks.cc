#include "ops/nn/internal/batch_norm_checks.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace sluice::internal {
namespace {

BatchNormGeometry GeometryOf(const Tensor& x) {
  BatchNormGeometry g;
  g.depth = x.dim_size(3);
  g.rows = g.depth == 0 ? 0 : x.NumElements() / g.depth;
  return g;
}

}  // namespace

absl::StatusOr<BatchNormAttrs> ReadBatchNormAttrs(const OpKernelConstruction& ctx) {
  BatchNormAttrs a;
  ASSIGN_OR_RETURN(a.epsilon, ctx.GetAttr<float>("epsilon"));
  absl::StatusOr<float> f = ctx.GetAttr<float>("exponential_avg_factor");
  a.factor = f.ok() ? *f : 1.0f;  // the gradient ops have none
  ASSIGN_OR_RETURN(std::string format, ctx.GetAttr<std::string>("data_format"));
  if (format != "NHWC") {
    return absl::UnimplementedError(
        absl::StrCat(ctx.node().op(), ": data_format ", format, " (only NHWC runs)"));
  }
  ASSIGN_OR_RETURN(a.training, ctx.GetAttr<bool>("is_training"));
  return a;
}

absl::StatusOr<BatchNormGeometry> CheckBatchNormInputs(OpKernelContext* ctx,
                                                       const BatchNormAttrs& attrs) {
  const Tensor& x = ctx->input(0);
  if (x.dims() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx->node().op(), ": x must be 4-D, got ", x.shape().DebugString()));
  }
  const BatchNormGeometry g = GeometryOf(x);
  const char* names[] = {"x", "scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; ++i) {
    const Tensor& t = ctx->input(i);
    // Training may leave mean and variance empty (no moving average).
    const bool may_be_empty = attrs.training && i >= 3 && attrs.factor == 1.0f;
    if (!(t.dims() == 1 && t.dim_size(0) == g.depth) && !(may_be_empty && t.NumElements() == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": ", names[i],
                                                     " must be [", g.depth, "], got ",
                                                     t.shape().DebugString()));
    }
  }
  return g;
}

absl::StatusOr<BatchNormGeometry> CheckBatchNormGradInputs(OpKernelContext* ctx) {
  const Tensor& dy = ctx->input(0);
  const Tensor& x = ctx->input(1);
  if (x.dims() != 4 || dy.shape() != x.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx->node().op(), ": x must be 4-D and y_backprop of its shape, got x ",
        x.shape().DebugString(), " and y_backprop ", dy.shape().DebugString()));
  }
  const BatchNormGeometry g = GeometryOf(x);
  const char* names[] = {"", "", "scale", "reserve_space_1", "reserve_space_2"};
  for (int i = 2; i < 5; ++i) {
    const Tensor& t = ctx->input(i);
    if (t.dims() != 1 || t.dim_size(0) != g.depth) {
      return absl::InvalidArgumentError(absl::StrCat(ctx->node().op(), ": ", names[i],
                                                     " must be [", g.depth, "], got ",
                                                     t.shape().DebugString()));
    }
  }
  return g;
}

}  // namespace sluice::internal
