#include "ops/nn/batch_norm_ops.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/nn/internal/batch_norm_checks.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The statistics are accumulated in double: a float sum over a large batch
// loses digits (TensorFlow's CPU kernel accumulates in float through Eigen).
class FusedBatchNormOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadBatchNormAttrs(ctx));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(const internal::BatchNormGeometry geo,
                     internal::CheckBatchNormInputs(ctx, attrs_));
    const Tensor& x = ctx->input(0);
    const int64_t depth = geo.depth;
    const int64_t rows = geo.rows;
    const bool training = attrs_.training;
    const float epsilon = attrs_.epsilon;
    const float factor = attrs_.factor;
    const float* in = x.data<float>();
    const float* scale = ctx->input(1).data<float>();
    const float* offset = ctx->input(2).data<float>();
    std::vector<double> mean(depth, 0), var(depth, 0);
    if (training) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < depth; ++c) mean[c] += in[r * depth + c];
      }
      for (double& m : mean) m = rows > 0 ? m / rows : 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < depth; ++c) {
          const double d = in[r * depth + c] - mean[c];
          var[c] += d * d;
        }
      }
      for (double& v : var) v = rows > 0 ? v / rows : 0;
    } else {
      for (int64_t c = 0; c < depth; ++c) {
        mean[c] = ctx->input(3).data<float>()[c];
        var[c] = ctx->input(4).data<float>()[c];
      }
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx->allocate_output(0, x.shape()));
    float* out = y->data<float>();
    std::vector<double> mul(depth), add(depth);
    for (int64_t c = 0; c < depth; ++c) {
      mul[c] = scale[c] / std::sqrt(var[c] + epsilon);
      add[c] = offset[c] - mean[c] * mul[c];
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < depth; ++c) {
        out[r * depth + c] = static_cast<float>(in[r * depth + c] * mul[c] + add[c]);
      }
    }
    // batch_mean, batch_variance: the statistics for the moving averages.
    const double bessel = rows > 1 ? static_cast<double>(rows) / (rows - 1) : 1.0;
    std::vector<double> out_mean = mean, out_var = var;
    if (training) {
      for (int64_t c = 0; c < depth; ++c) {
        out_var[c] = var[c] * bessel;
        if (factor != 1.0f) {
          const double old_mean = ctx->input(3).data<float>()[c];
          const double old_var = ctx->input(4).data<float>()[c];
          out_mean[c] = (1 - factor) * old_mean + factor * mean[c];
          out_var[c] = (1 - factor) * old_var + factor * out_var[c];
        }
      }
    }
    const std::vector<double>* values[] = {&out_mean, &out_var, &mean, &var};
    for (int k = 0; k < 4; ++k) {
      ASSIGN_OR_RETURN(Tensor * t, ctx->allocate_output(1 + k, TensorShape({depth})));
      for (int64_t c = 0; c < depth; ++c) t->data<float>()[c] = static_cast<float>((*values[k])[c]);
    }
    if (ctx->num_outputs() == 6) {  // V3's reserve_space_3: unused on the CPU
      RETURN_IF_ERROR(ctx->allocate_output(5, TensorShape({0})).status());
    }
    return absl::OkStatus();
  }

 private:
  internal::BatchNormAttrs attrs_;
};

absl::Status FusedBatchNormShape(InferenceContext* c) {
  RETURN_IF_ERROR(c->WithRank(0, 4));
  const TensorShape& x = c->input(0);
  c->set_output(0, x);
  const int64_t depth = x.rank() == 4 ? x.dim(3) : TensorShape::kUnknownDim;
  for (int i = 1; i < c->num_outputs(); ++i) c->set_output(i, TensorShape({depth}));
  if (c->num_outputs() == 6) c->set_output(5, TensorShape({TensorShape::kUnknownDim}));
  return absl::OkStatus();
}

OpDefBuilder BatchNormBuilder(const char* name, bool has_u, bool v3) {
  OpDefBuilder b(name);
  const char* u = has_u ? "U" : "T";
  b.Input("x: T")
      .Input(absl::StrCat("scale: ", u))
      .Input(absl::StrCat("offset: ", u))
      .Input(absl::StrCat("mean: ", u))
      .Input(absl::StrCat("variance: ", u))
      .Output("y: T")
      .Output(absl::StrCat("batch_mean: ", u))
      .Output(absl::StrCat("batch_variance: ", u))
      .Output(absl::StrCat("reserve_space_1: ", u))
      .Output(absl::StrCat("reserve_space_2: ", u));
  if (v3) b.Output(absl::StrCat("reserve_space_3: ", u));
  b.Attr(has_u ? "T: {half, bfloat16, float}" : "T: {float}");
  if (has_u) b.Attr("U: {float}");
  b.Attr("epsilon: float = 0.0001")
      .Attr("exponential_avg_factor: float = 1.0")
      .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
      .Attr("is_training: bool = true")
      .SetShapeFn(FusedBatchNormShape);
  return b;
}

}  // namespace

absl::Status RegisterBatchNormOps(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->Register(BatchNormBuilder("FusedBatchNorm", false, false)));
  RETURN_IF_ERROR(ops->Register(BatchNormBuilder("FusedBatchNormV2", true, false)));
  RETURN_IF_ERROR(ops->Register(BatchNormBuilder("FusedBatchNormV3", true, true)));
  return absl::OkStatus();
}

void RegisterBatchNormKernels(KernelRegistry* kernels) {
  kernels->Register<FusedBatchNormOp>(
      KernelDef("FusedBatchNorm", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    kernels->Register<FusedBatchNormOp>(
        KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT).TypeConstraint("U", DT_FLOAT));
  }
}

namespace ops {

FusedBatchNormOutputs FusedBatchNormV3(const Scope& scope, Input x, Input scale, Input offset,
                                       Input mean, Input variance,
                                       const FusedBatchNormAttrs& attrs,
                                       std::source_location loc) {
  std::vector<Output> out = scope.Op("FusedBatchNormV3", loc)
                                .Input(x)
                                .Input(scale)
                                .Input(offset)
                                .Input(mean)
                                .Input(variance)
                                .Attr("epsilon", attrs.epsilon)
                                .Attr("exponential_avg_factor", attrs.exponential_avg_factor)
                                .Attr("data_format", attrs.data_format)
                                .Attr("is_training", attrs.is_training)
                                .FinalizeAll();
  if (out.size() != 6) return {};
  return {out[0], out[1], out[2], out[3], out[4]};
}

}  // namespace ops
}  // namespace sluice
