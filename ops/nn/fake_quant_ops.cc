// Fake quantization: op definitions, CPU kernels, gradients and wrappers
// (ops/nn/fake_quant_ops.h).
#include "ops/nn/fake_quant_ops.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/shape_inference.h"
#include "ops/internal/grad_util.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// The quantization grid: [quant_min, quant_max] from num_bits and
// narrow_range.
struct Grid {
  int quant_min = 0;
  int quant_max = 255;
};

absl::StatusOr<Grid> ReadGrid(const OpKernelConstruction& ctx) {
  ASSIGN_OR_RETURN(int64_t bits, ctx.GetAttr<int64_t>("num_bits"));
  ASSIGN_OR_RETURN(bool narrow, ctx.GetAttr<bool>("narrow_range"));
  if (bits < 2 || bits > 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_bits must be between 2 and 16, inclusive, got ", bits));
  }
  return Grid{narrow ? 1 : 0, (1 << bits) - 1};
}

// The Args forms' range attrs; min must lie below max.
absl::Status ReadArgsRange(const OpKernelConstruction& ctx, float* min, float* max) {
  ASSIGN_OR_RETURN(*min, ctx.GetAttr<float>("min"));
  ASSIGN_OR_RETURN(*max, ctx.GetAttr<float>("max"));
  if (!(*min < *max)) {
    return absl::InvalidArgumentError(
        absl::StrCat("min has to be smaller than max, was: ", *min, " >= ", *max));
  }
  return absl::OkStatus();
}

// The range nudged so that zero lies on the grid.
struct Nudged {
  float min = 0, max = 0, scale = 0;
};

Nudged Nudge(float min, float max, const Grid& g) {
  const float qmin = static_cast<float>(g.quant_min);
  const float qmax = static_cast<float>(g.quant_max);
  Nudged n;
  n.scale = (max - min) / (qmax - qmin);
  const float zero_from_min = qmin - min / n.scale;
  uint16_t zero;
  if (zero_from_min < qmin) {
    zero = static_cast<uint16_t>(g.quant_min);
  } else if (zero_from_min > qmax) {
    zero = static_cast<uint16_t>(g.quant_max);
  } else {
    zero = static_cast<uint16_t>(std::round(zero_from_min));
  }
  n.min = (qmin - zero) * n.scale;
  n.max = (qmax - zero) * n.scale;
  return n;
}

// Quantizes `n` values `stride` apart. by_inverse: multiply by 1 / scale
// (the Args form) rather than divide.
void Quantize(const float* in, float* out, int64_t n, int64_t stride, const Nudged& r,
              bool by_inverse) {
  const float inverse = 1.0f / r.scale;
  for (int64_t i = 0; i < n; ++i) {
    // Eigen's cwiseMin / cwiseMax: a NaN input stays NaN.
    const float x = in[i * stride];
    const float below_max = r.max < x ? r.max : x;
    const float clamped = below_max < r.min ? r.min : below_max;
    const float shifted = clamped - r.min;
    const float steps = by_inverse ? shifted * inverse + 0.5f : shifted / r.scale + 0.5f;
    out[i * stride] = std::floor(steps) * r.scale + r.min;
  }
}

// The straight-through gradient of `n` values `stride` apart; the sums
// below and above the range into *below and *above (when not null).
void PassThrough(const float* dy, const float* in, float* dx, int64_t n, int64_t stride,
                 const Nudged& r, float* below, float* above) {
  float sum_below = 0, sum_above = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i * stride], g = dy[i * stride];
    dx[i * stride] = x >= r.min && x <= r.max ? g : 0.0f;
    if (x < r.min) sum_below += g;
    if (x > r.max) sum_above += g;
  }
  if (below != nullptr) *below = sum_below;
  if (above != nullptr) *above = sum_above;
}

// The range inputs of the Vars forms: scalars, or [depth] per channel.
absl::Status CheckRange(OpKernelContext* ctx, int first, bool per_channel, int64_t depth) {
  for (int i : {first, first + 1}) {
    const Tensor& t = ctx->input(i);
    const char* name = i == first ? "min" : "max";
    if (!per_channel && t.dims() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": `", name, "` must be rank 0 but is rank ", t.dims()));
    }
    if (per_channel && (t.dims() != 1 || t.dim_size(0) != depth)) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": `", name, "` must be a vector of ", depth,
                       " (the inputs' last dimension), got shape ", t.shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

// FakeQuantWithMinMaxArgs, ...Vars and ...VarsPerChannel.
class FakeQuantOp : public OpKernel {
 public:
  enum class Form { kArgs, kVars, kPerChannel };
  explicit FakeQuantOp(Form form) : form_(form) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(grid_, ReadGrid(ctx));
    if (form_ == Form::kArgs) RETURN_IF_ERROR(ReadArgsRange(ctx, &min_, &max_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& in = ctx->input(0);
    const int64_t depth = in.dims() > 0 ? in.dim_size(in.dims() - 1) : 1;
    if (form_ == Form::kPerChannel && in.dims() == 0) {
      return absl::InvalidArgumentError(
          "FakeQuantWithMinMaxVarsPerChannel: inputs must have a channel dimension");
    }
    if (form_ != Form::kArgs) RETURN_IF_ERROR(CheckRange(ctx, 1, form_ == Form::kPerChannel, depth));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, in.shape()));
    const float* x = in.data<float>();
    float* y = out->data<float>();
    if (form_ == Form::kPerChannel) {
      const int64_t rows = depth == 0 ? 0 : in.NumElements() / depth;
      for (int64_t c = 0; c < depth; ++c) {
        const Nudged r = Nudge(ctx->input(1).data<float>()[c], ctx->input(2).data<float>()[c], grid_);
        Quantize(x + c, y + c, rows, depth, r, false);
      }
      return absl::OkStatus();
    }
    const float lo = form_ == Form::kArgs ? min_ : ctx->input(1).scalar<float>();
    const float hi = form_ == Form::kArgs ? max_ : ctx->input(2).scalar<float>();
    Quantize(x, y, in.NumElements(), 1, Nudge(lo, hi, grid_), form_ == Form::kArgs);
    return absl::OkStatus();
  }

 private:
  const Form form_;
  Grid grid_;
  float min_ = 0, max_ = 0;
};

// The gradient ops: (gradients, inputs[, min, max]) -> backprops (and the
// range's for the Vars forms).
class FakeQuantGradientOp : public OpKernel {
 public:
  explicit FakeQuantGradientOp(FakeQuantOp::Form form) : form_(form) {}

  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(grid_, ReadGrid(ctx));
    if (form_ == FakeQuantOp::Form::kArgs) RETURN_IF_ERROR(ReadArgsRange(ctx, &min_, &max_));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& in = ctx->input(1);
    if (dy.shape() != in.shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx->node().op(), ": gradients and inputs must be the same size, got ",
                       dy.shape().DebugString(), " and ", in.shape().DebugString()));
    }
    const bool per_channel = form_ == FakeQuantOp::Form::kPerChannel;
    const int64_t depth = in.dims() > 0 ? in.dim_size(in.dims() - 1) : 1;
    if (form_ != FakeQuantOp::Form::kArgs) RETURN_IF_ERROR(CheckRange(ctx, 2, per_channel, depth));
    ASSIGN_OR_RETURN(Tensor * dx, ctx->allocate_output(0, in.shape()));
    if (form_ == FakeQuantOp::Form::kArgs) {
      PassThrough(dy.data<float>(), in.data<float>(), dx->data<float>(), in.NumElements(), 1,
                  Nudge(min_, max_, grid_), nullptr, nullptr);
      return absl::OkStatus();
    }
    const TensorShape range_shape = per_channel ? TensorShape({depth}) : TensorShape();
    ASSIGN_OR_RETURN(Tensor * dmin, ctx->allocate_output(1, range_shape));
    ASSIGN_OR_RETURN(Tensor * dmax, ctx->allocate_output(2, range_shape));
    const float* lo = ctx->input(2).data<float>();
    const float* hi = ctx->input(3).data<float>();
    if (!per_channel) {
      PassThrough(dy.data<float>(), in.data<float>(), dx->data<float>(), in.NumElements(), 1,
                  Nudge(lo[0], hi[0], grid_), dmin->data<float>(), dmax->data<float>());
      return absl::OkStatus();
    }
    const int64_t rows = depth == 0 ? 0 : in.NumElements() / depth;
    for (int64_t c = 0; c < depth; ++c) {
      PassThrough(dy.data<float>() + c, in.data<float>() + c, dx->data<float>() + c, rows, depth,
                  Nudge(lo[c], hi[c], grid_), dmin->data<float>() + c, dmax->data<float>() + c);
    }
    return absl::OkStatus();
  }

 private:
  const FakeQuantOp::Form form_;
  Grid grid_;
  float min_ = 0, max_ = 0;
};

OpDefBuilder& BitsAttrs(OpDefBuilder& b) {
  return b.Attr("num_bits: int = 8").Attr("narrow_range: bool = false");
}

OpDefBuilder& ArgsAttrs(OpDefBuilder& b) {
  return BitsAttrs(b.Attr("min: float = -6").Attr("max: float = 6"));
}

absl::Status SameAsInput(InferenceContext* c) {
  c->set_output(0, c->input(0));
  return absl::OkStatus();
}

// The Vars gradients: backprops like the inputs, the range's like min.
absl::Status VarsGradientShape(InferenceContext* c) {
  c->set_output(0, c->input(1));
  c->set_output(1, c->input(2));
  c->set_output(2, c->input(3));
  return absl::OkStatus();
}

// A fake-quant op's gradient: its gradient op on (dy, inputs[, min, max]),
// with the same attrs.
GradFn FakeQuantGrad(const char* grad_op, int num_inputs) {
  return [grad_op, num_inputs](const Scope& s, const Node& node,
                               absl::Span<const Output> dy) -> absl::StatusOr<std::vector<Output>> {
    std::vector<Output> grads(num_inputs);
    if (!dy[0].valid()) return grads;
    OpBuilder b = s.Op(grad_op);
    b.Input(dy[0]);
    for (int i = 0; i < num_inputs; ++i) b.Input(internal::InputOf(node, i));
    for (const auto& [name, value] : node.attrs()) {
      if (name == "num_bits" || name == "narrow_range" || name == "min" || name == "max") {
        b.SetAttr(name, value);
      }
    }
    std::vector<Output> outs = b.FinalizeAll();
    RETURN_IF_ERROR(s.status());
    for (int i = 0; i < num_inputs && i < static_cast<int>(outs.size()); ++i) grads[i] = outs[i];
    return grads;
  };
}

}  // namespace

absl::Status RegisterFakeQuantOps(OpRegistry* ops) {
  {
    OpDefBuilder b("FakeQuantWithMinMaxArgs");
    b.Input("inputs: float").Output("outputs: float").SetShapeFn(SameAsInput);
    RETURN_IF_ERROR(ops->Register(ArgsAttrs(b)));
  }
  {
    OpDefBuilder b("FakeQuantWithMinMaxArgsGradient");
    b.Input("gradients: float").Input("inputs: float").Output("backprops: float")
        .SetShapeFn([](InferenceContext* c) {
          c->set_output(0, c->input(1));
          return absl::OkStatus();
        });
    RETURN_IF_ERROR(ops->Register(ArgsAttrs(b)));
  }
  for (const char* op : {"FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel"}) {
    OpDefBuilder b(op);
    b.Input("inputs: float").Input("min: float").Input("max: float").Output("outputs: float")
        .SetShapeFn(SameAsInput);
    RETURN_IF_ERROR(ops->Register(BitsAttrs(b)));
  }
  for (const char* op :
       {"FakeQuantWithMinMaxVarsGradient", "FakeQuantWithMinMaxVarsPerChannelGradient"}) {
    OpDefBuilder b(op);
    b.Input("gradients: float")
        .Input("inputs: float")
        .Input("min: float")
        .Input("max: float")
        .Output("backprops_wrt_input: float")
        .Output("backprop_wrt_min: float")
        .Output("backprop_wrt_max: float")
        .SetShapeFn(VarsGradientShape);
    RETURN_IF_ERROR(ops->Register(BitsAttrs(b)));
  }
  for (const char* op : {"FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVarsGradient",
                         "FakeQuantWithMinMaxVarsPerChannelGradient"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

absl::Status RegisterFakeQuantGradients(OpRegistry* ops) {
  RETURN_IF_ERROR(ops->SetGradient("FakeQuantWithMinMaxArgs",
                                   FakeQuantGrad("FakeQuantWithMinMaxArgsGradient", 1)));
  RETURN_IF_ERROR(ops->SetGradient("FakeQuantWithMinMaxVars",
                                   FakeQuantGrad("FakeQuantWithMinMaxVarsGradient", 3)));
  return ops->SetGradient("FakeQuantWithMinMaxVarsPerChannel",
                          FakeQuantGrad("FakeQuantWithMinMaxVarsPerChannelGradient", 3));
}

void RegisterFakeQuantKernels(KernelRegistry* k) {
  using Form = FakeQuantOp::Form;
  const std::pair<const char*, Form> forms[] = {
      {"FakeQuantWithMinMaxArgs", Form::kArgs},
      {"FakeQuantWithMinMaxVars", Form::kVars},
      {"FakeQuantWithMinMaxVarsPerChannel", Form::kPerChannel}};
  for (const auto& [op, form] : forms) {
    k->Register(KernelDef(op, kDeviceTypeCpu), [form = form] { return std::make_unique<FakeQuantOp>(form); });
    k->Register(KernelDef(absl::StrCat(op, "Gradient"), kDeviceTypeCpu),
                [form = form] { return std::make_unique<FakeQuantGradientOp>(form); });
  }
}

namespace ops {

Output FakeQuantWithMinMaxArgs(const Scope& s, Input inputs, float min, float max,
                               const FakeQuantAttrs& attrs, std::source_location loc) {
  return s.Op("FakeQuantWithMinMaxArgs", loc)
      .Input(inputs)
      .Attr("min", min)
      .Attr("max", max)
      .Attr("num_bits", attrs.num_bits)
      .Attr("narrow_range", attrs.narrow_range)
      .Finalize1();
}

namespace {

Output VarsNode(const Scope& s, const char* op, Input inputs, Input min, Input max,
                const FakeQuantAttrs& attrs, std::source_location loc) {
  return s.Op(op, loc)
      .Input(inputs)
      .Input(min)
      .Input(max)
      .Attr("num_bits", attrs.num_bits)
      .Attr("narrow_range", attrs.narrow_range)
      .Finalize1();
}

}  // namespace

Output FakeQuantWithMinMaxVars(const Scope& s, Input inputs, Input min, Input max,
                               const FakeQuantAttrs& attrs, std::source_location loc) {
  return VarsNode(s, "FakeQuantWithMinMaxVars", inputs, min, max, attrs, loc);
}

Output FakeQuantWithMinMaxVarsPerChannel(const Scope& s, Input inputs, Input min, Input max,
                                         const FakeQuantAttrs& attrs, std::source_location loc) {
  return VarsNode(s, "FakeQuantWithMinMaxVarsPerChannel", inputs, min, max, attrs, loc);
}

}  // namespace ops
}  // namespace sluice
