#include "ops/nn/batch_norm_grad_ops.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/batch_norm_checks.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// Sums are accumulated in double (TensorFlow's CPU kernel reduces in float
// through Eigen).
class FusedBatchNormGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadBatchNormAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const internal::BatchNormGeometry geo,
                     internal::CheckBatchNormGradInputs(ctx));
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const int64_t depth = geo.depth;
    const int64_t rows = geo.rows;
    const bool training = attrs_.training;
    const float epsilon = attrs_.epsilon;
    const float* g = dy.data<float>();
    const float* in = x.data<float>();
    const float* scale = ctx->input(2).data<float>();
    const float* mean = ctx->input(3).data<float>();
    const float* var = ctx->input(4).data<float>();
    std::vector<double> r(depth), sum_dy(depth, 0), sum_dy_xhat(depth, 0);
    for (int64_t c = 0; c < depth; ++c) r[c] = 1 / std::sqrt(double{var[c]} + epsilon);
    for (int64_t i = 0; i < rows * depth; ++i) {
      const int64_t c = i % depth;
      sum_dy[c] += g[i];
      sum_dy_xhat[c] += g[i] * (in[i] - mean[c]) * r[c];
    }
    ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, x.shape()));
    float* out = dx->data<float>();
    for (int64_t i = 0; i < rows * depth; ++i) {
      const int64_t c = i % depth;
      double inner = g[i];
      if (training) {
        const double xhat = (in[i] - mean[c]) * r[c];
        inner -= (sum_dy[c] + xhat * sum_dy_xhat[c]) / rows;
      }
      out[i] = static_cast<float>(scale[c] * r[c] * inner);
    }
    const std::vector<double>* sums[] = {&sum_dy_xhat, &sum_dy};
    for (int k = 0; k < 2; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(1 + k, TensorShape({depth})));
      for (int64_t c = 0; c < depth; ++c) t->data<float>()[c] = static_cast<float>((*sums[k])[c]);
    }
    for (int i = 3; i < 5; ++i) RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape({0})).status());
    return absl::OkStatus();
  }

 private:
  internal::BatchNormAttrs attrs_;
};

absl::Status FusedBatchNormGradShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  RETURN_IF_ERROR(c->WithRank(1, 4));
  absl::StatusOr<TensorShape> x = c->input(0).Merge(c->input(1));
  if (!x.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": y_backprop ", c->input(0).DebugString(), " and x ",
        c->input(1).DebugString(), " must have one shape"));
  }
  c->set_output(0, *x);
  const int64_t depth = x->unknown_rank() ? TensorShape::kUnknownDim : x->dim(3);
  c->set_output(1, TensorShape({depth}));
  c->set_output(2, TensorShape({depth}));
  c->set_output(3, TensorShape({0}));
  c->set_output(4, TensorShape({0}));
  return absl::OkStatus();
}

OpDefBuilder GradBuilder(const char* name, bool has_u, bool v3) {
  OpDefBuilder b(name);
  const char* u = has_u ? "U" : "T";
  b.Input("y_backprop: T")
      .Input("x: T")
      .Input(has_u ? "scale: float" : "scale: T")
      .Input(absl::StrCat("reserve_space_1: ", u))
      .Input(absl::StrCat("reserve_space_2: ", u));
  if (v3) b.Input("reserve_space_3: U");
  b.Output("x_backprop: T")
      .Output(absl::StrCat("scale_backprop: ", u))
      .Output(absl::StrCat("offset_backprop: ", u))
      .Output(absl::StrCat(v3 ? "reserve_space_4: " : "reserve_space_3: ", u))
      .Output(absl::StrCat(v3 ? "reserve_space_5: " : "reserve_space_4: ", u));
  b.Attr(has_u ? "T: {half, bfloat16, float}" : "T: {float}");
  if (has_u) b.Attr("U: {float}");
  b.Attr("epsilon: float = 0.0001")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("is_training: bool = true")
      .SetShapeFn(FusedBatchNormGradShape);
  return b;
}

}  // namespace

absl::Status RegisterBatchNormGradOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(GradBuilder("FusedBatchNormGrad", false, false)));
  RETURN_IF_ERROR(ops->Register(GradBuilder("FusedBatchNormGradV2", true, false)));
  RETURN_IF_ERROR(ops->Register(GradBuilder("FusedBatchNormGradV3", true, true)));
  return absl::OkStatus();
}

void RegisterBatchNormGradKernels(KernelRegistry* kernels) {
  kernels->Register<FusedBatchNormGradOp>(
      KernelDef("FusedBatchNormGrad", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  for (const char* op : {"FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    kernels->Register<FusedBatchNormGradOp>(
        KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT).TypeConstraint("U", DT_FLOAT));
  }
}

namespace ops {

FusedBatchNormGradOutputs FusedBatchNormGradV3(const Scope& scope, Input y_backprop, Input x,
                                               Input scale, Input reserve_space_1,
                                               Input reserve_space_2, Input reserve_space_3,
                                               const FusedBatchNormGradAttrs& attrs,
                                               std::source_location loc) {
  std::vector<Output> out = scope.Op("FusedBatchNormGradV3", loc)
                                .Input(y_backprop)
                                .Input(x)
                                .Input(scale)
                                .Input(reserve_space_1)
                                .Input(reserve_space_2)
                                .Input(reserve_space_3)
                                .Attr("epsilon", attrs.epsilon)
                                .Attr("data_format", attrs.data_format)
                                .Attr("is_training", attrs.is_training)
                                .FinalizeAll();
  if (out.size() != 5) return {};
  return {out[0], out[1], out[2]};
}

}  // namespace ops
}  // namespace sluice
