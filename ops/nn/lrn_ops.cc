#include "ops/nn/lrn_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

struct LrnParams {
  int64_t radius = 5;
  double bias = 1, alpha = 1, beta = 0.5;
};

absl::StatusOr<LrnParams> ReadParams(const Node& node) {
  LrnParams p;
  ASSIGN_OR_RETURN(p.radius, node.GetAttr<int64_t>("depth_radius"));
  ASSIGN_OR_RETURN(float bias, node.GetAttr<float>("bias"));
  ASSIGN_OR_RETURN(float alpha, node.GetAttr<float>("alpha"));
  ASSIGN_OR_RETURN(float beta, node.GetAttr<float>("beta"));
  if (p.radius < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op(), ": depth_radius must be non-negative, got ", p.radius));
  }
  p.bias = bias;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// norm[d] = bias + alpha * sum of x^2 over [d - r, d + r] within the row.
void Norms(const LrnParams& p, const float* x, int64_t depth, double* norm) {
  for (int64_t d = 0; d < depth; ++d) {
    double sum = 0;
    const int64_t lo = std::max<int64_t>(0, d - p.radius);
    const int64_t hi = std::min<int64_t>(depth - 1, d + p.radius);
    for (int64_t j = lo; j <= hi; ++j) sum += double{x[j]} * x[j];
    norm[d] = p.bias + p.alpha * sum;
  }
}

// LRN (1 input) and LRNGrad (3 inputs: dy, x, y); y is not needed by the
// CPU arithmetic, only checked for its shape.
class LrnKernel : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(p_, ReadParams(ctx.node()));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const bool grad = ctx->num_inputs() == 3;
    const Tensor& x = ctx->input(grad ? 1 : 0);
    if (x.dims() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("input must be 4-D, got ", x.shape().DebugString()));
    }
    for (int i = 0; grad && i < 3; ++i) {
      if (ctx->input(i).shape() != x.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input_grads, input_image and output_image must have one shape, got ",
            ctx->input(0).shape().DebugString(), ", ", x.shape().DebugString(), " and ",
            ctx->input(2).shape().DebugString()));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, x.shape()));
    const int64_t depth = x.dim_size(3);
    const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
    std::vector<double> norm(depth);
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data<float>() + r * depth;
      float* o = out->data<float>() + r * depth;
      Norms(p_, xr, depth, norm.data());
      if (!grad) {
        for (int64_t d = 0; d < depth; ++d) o[d] = static_cast<float>(xr[d] * std::pow(norm[d], -p_.beta));
        continue;
      }
      const float* dy = ctx->input(0).data<float>() + r * depth;
      std::vector<double> dx(depth, 0);
      for (int64_t d = 0; d < depth; ++d) {
        const double scaled = std::pow(norm[d], -p_.beta);
        dx[d] += dy[d] * scaled;
        const double k = -2 * p_.alpha * p_.beta * dy[d] * xr[d] * scaled / norm[d];
        const int64_t lo = std::max<int64_t>(0, d - p_.radius);
        const int64_t hi = std::min<int64_t>(depth - 1, d + p_.radius);
        for (int64_t j = lo; j <= hi; ++j) dx[j] += k * xr[j];
      }
      for (int64_t d = 0; d < depth; ++d) o[d] = static_cast<float>(dx[d]);
    }
    return absl::OkStatus();
  }

 private:
  LrnParams p_;
};

absl::Status LrnShape(InferenceContext* c) {
  for (int i = 0; i < c->num_inputs(); ++i) RETURN_IF_ERROR(c->WithRank(i, 4));
  TensorShape merged = c->input(0);
  for (int i = 1; i < c->num_inputs(); ++i) {
    absl::StatusOr<TensorShape> m = merged.Merge(c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          c->node().op(), ": inputs must have one shape, got ", merged.DebugString(), " and ",
          c->input(i).DebugString()));
    }
    merged = *m;
  }
  c->set_output(0, merged);
  return absl::OkStatus();
}

OpDefBuilder& LrnAttrs(OpDefBuilder& b) {
  return b.Attr("depth_radius: int = 5")
      .Attr("bias: float = 1.0")
      .Attr("alpha: float = 1.0")
      .Attr("beta: float = 0.5")
      .Attr("T: {half, bfloat16, float} = DT_FLOAT")
      .SetShapeFn(LrnShape);
}

OpBuilder& SetAttrs(OpBuilder& b, const ops::LRNAttrs& a) {
  return b.Attr("depth_radius", a.depth_radius)
      .Attr("bias", a.bias)
      .Attr("alpha", a.alpha)
      .Attr("beta", a.beta);
}

}  // namespace

absl::Status RegisterLrnOps(OpRegistry* ops) {
  OpDefBuilder lrn("LRN");
  lrn.Input("input: T").Output("output: T");
  RETURN_IF_ERROR(ops->Register(LrnAttrs(lrn)));
  OpDefBuilder grad("LRNGrad");
  grad.Input("input_grads: T").Input("input_image: T").Input("output_image: T").Output("output: T");
  RETURN_IF_ERROR(ops->Register(LrnAttrs(grad)));
  return absl::OkStatus();
}

void RegisterLrnKernels(KernelRegistry* k) {
  for (const char* op : {"LRN", "LRNGrad"}) {
    k->Register<LrnKernel>(KernelDef(op, kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  }
}

namespace ops {

Output LRN(const Scope& s, Input input, const LRNAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("LRN", loc);
  b.Input(input);
  return SetAttrs(b, attrs).Finalize1();
}

Output LRNGrad(const Scope& s, Input input_grads, Input input_image, Input output_image,
               const LRNAttrs& attrs, std::source_location loc) {
  OpBuilder b = s.Op("LRNGrad", loc);
  b.Input(input_grads).Input(input_image).Input(output_image);
  return SetAttrs(b, attrs).Finalize1();
}

}  // namespace ops
}  // namespace sluice
