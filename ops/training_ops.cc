// Training op definitions, shape functions and wrappers (kernels:
// training_kernels.cc).
#include "ops/training_ops.h"

#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

std::string ArgName(const InferenceContext& c, int i) { return c.node().op_def().inputs[i].name; }

// The inputs at `same` must have compatible shapes (var, slots, grad), the
// inputs at `scalars` must be scalars; the output has the merged shape.
absl::Status ApplyShape(InferenceContext* c, std::initializer_list<int> same,
                        std::initializer_list<int> scalars) {
  for (int i : scalars) {
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", ArgName(*c, i),
                                                     " must be a scalar, got shape ",
                                                     c->input(i).DebugString()));
    }
  }
  TensorShape merged = c->input(0);
  for (int i : same) {
    absl::StatusOr<TensorShape> m = merged.Merge(c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(c->node().op(), ": var has shape ", c->input(0).DebugString(), " but ",
                       ArgName(*c, i), " has shape ", c->input(i).DebugString()));
    }
    merged = *std::move(m);
  }
  c->set_output(0, std::move(merged));
  return absl::OkStatus();
}

constexpr char kTypes[] = "T: {float, double}";

}  // namespace

absl::Status RegisterTrainingOps(OpRegistry* ops) {
  RETURN_IF_ERROR(
      ops->Register(OpDefBuilder("ApplyGradientDescent")
                        .Input("var: Ref(T)")
                        .Input("alpha: T")
                        .Input("delta: T")
                        .Output("out: Ref(T)")
                        .Attr(kTypes)
                        .Attr("use_locking: bool = false")
                        .SetShapeFn([](InferenceContext* c) { return ApplyShape(c, {2}, {1}); })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ApplyMomentum")
                                    .Input("var: Ref(T)")
                                    .Input("accum: Ref(T)")
                                    .Input("lr: T")
                                    .Input("grad: T")
                                    .Input("momentum: T")
                                    .Output("out: Ref(T)")
                                    .Attr(kTypes)
                                    .Attr("use_locking: bool = false")
                                    .Attr("use_nesterov: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return ApplyShape(c, {1, 3}, {2, 4});
                                    })));
  RETURN_IF_ERROR(ops->Register(OpDefBuilder("ApplyAdam")
                                    .Input("var: Ref(T)")
                                    .Input("m: Ref(T)")
                                    .Input("v: Ref(T)")
                                    .Input("beta1_power: T")
                                    .Input("beta2_power: T")
                                    .Input("lr: T")
                                    .Input("beta1: T")
                                    .Input("beta2: T")
                                    .Input("epsilon: T")
                                    .Input("grad: T")
                                    .Output("out: Ref(T)")
                                    .Attr(kTypes)
                                    .Attr("use_locking: bool = false")
                                    .Attr("use_nesterov: bool = false")
                                    .SetShapeFn([](InferenceContext* c) {
                                      return ApplyShape(c, {1, 2, 9}, {3, 4, 5, 6, 7, 8});
                                    })));
  for (const char* op : {"ApplyGradientDescent", "ApplyMomentum", "ApplyAdam"}) {
    RETURN_IF_ERROR(ops->SetNoGradient(op));
  }
  return absl::OkStatus();
}

namespace ops {

Output ApplyGradientDescent(const Scope& s, Input var, Input alpha, Input delta,
                            const ApplyGradientDescentAttrs& attrs, std::source_location loc) {
  return s.Op("ApplyGradientDescent", loc)
      .Input(var)
      .Input(alpha)
      .Input(delta)
      .Attr("use_locking", attrs.use_locking)
      .Finalize1();
}

Output ApplyMomentum(const Scope& s, Input var, Input accum, Input lr, Input grad, Input momentum,
                     const ApplyMomentumAttrs& attrs, std::source_location loc) {
  return s.Op("ApplyMomentum", loc)
      .Input(var)
      .Input(accum)
      .Input(lr)
      .Input(grad)
      .Input(momentum)
      .Attr("use_locking", attrs.use_locking)
      .Attr("use_nesterov", attrs.use_nesterov)
      .Finalize1();
}

Output ApplyAdam(const Scope& s, Input var, Input m, Input v, Input beta1_power, Input beta2_power,
                 Input lr, Input beta1, Input beta2, Input epsilon, Input grad,
                 const ApplyAdamAttrs& attrs, std::source_location loc) {
  return s.Op("ApplyAdam", loc)
      .Input(var)
      .Input(m)
      .Input(v)
      .Input(beta1_power)
      .Input(beta2_power)
      .Input(lr)
      .Input(beta1)
      .Input(beta2)
      .Input(epsilon)
      .Input(grad)
      .Attr("use_locking", attrs.use_locking)
      .Attr("use_nesterov", attrs.use_nesterov)
      .Finalize1();
}

}  // namespace ops
}  // namespace sluice
