// Training op definitions, shape functions and wrappers (kernels:
// training_kernels.cc).
#include "ops/training_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/shape_inference.h"
#include "base/status_macros.h"

namespace sluice {
namespace {

std::string ArgName(const InferenceContext& c, int i) { return c.node().op_def().inputs[i].name; }

// The inputs at `scalars` must be scalars.
absl::Status CheckScalars(InferenceContext* c, const std::vector<int>& scalars) {
  for (int i : scalars) {
    if (c->input(i).rank() > 0) {
      return absl::InvalidArgumentError(absl::StrCat(c->node().op(), ": ", ArgName(*c, i),
                                                     " must be a scalar, got shape ",
                                                     c->input(i).DebugString()));
    }
  }
  return absl::OkStatus();
}

// The inputs at `same` must have compatible shapes (var, slots, grad), the
// inputs at `scalars` must be scalars; the output has the merged shape.
absl::Status ApplyShape(InferenceContext* c, const std::vector<int>& same,
                        const std::vector<int>& scalars) {
  RETURN_IF_ERROR(CheckScalars(c, scalars));
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

// One training op in both forms: "Apply*" on ref variables (outputs the
// variable) and "ResourceApply*" on resource handles (no output).
struct ApplyDef {
  const char* name;
  std::vector<std::pair<const char*, bool>> inputs;  // (name, is a variable)
  std::vector<const char*> attrs;                    // beyond T and use_locking
  std::vector<int> same;                             // inputs shaped like var
  std::vector<int> scalars;
};

absl::Status RegisterApply(OpRegistry* ops, const ApplyDef& d, bool resource) {
  OpDefBuilder b(resource ? absl::StrCat("Resource", d.name) : std::string(d.name));
  for (const auto& [name, is_var] : d.inputs) {
    b.Input(absl::StrCat(name, is_var ? (resource ? ": resource" : ": Ref(T)") : ": T"));
  }
  if (!resource) b.Output("out: Ref(T)");
  b.Attr(kTypes).Attr("use_locking: bool = false");
  for (const char* a : d.attrs) b.Attr(a);
  const std::vector<int> same = d.same;
  const std::vector<int> scalars = d.scalars;
  if (resource) {
    b.SetIsStateful();
    b.SetShapeFn([scalars](InferenceContext* c) { return CheckScalars(c, scalars); });
  } else {
    b.SetShapeFn([same, scalars](InferenceContext* c) { return ApplyShape(c, same, scalars); });
  }
  RETURN_IF_ERROR(ops->Register(b));
  return ops->SetNoGradient(resource ? absl::StrCat("Resource", d.name) : std::string(d.name));
}

}  // namespace

absl::Status RegisterTrainingOps(OpRegistry* ops) {
  const ApplyDef defs[] = {
      {"ApplyGradientDescent", {{"var", true}, {"alpha", false}, {"delta", false}}, {}, {2}, {1}},
      {"ApplyMomentum",
       {{"var", true}, {"accum", true}, {"lr", false}, {"grad", false}, {"momentum", false}},
       {"use_nesterov: bool = false"},
       {1, 3},
       {2, 4}},
      {"ApplyAdam",
       {{"var", true},
        {"m", true},
        {"v", true},
        {"beta1_power", false},
        {"beta2_power", false},
        {"lr", false},
        {"beta1", false},
        {"beta2", false},
        {"epsilon", false},
        {"grad", false}},
       {"use_nesterov: bool = false"},
       {1, 2, 9},
       {3, 4, 5, 6, 7, 8}},
  };
  for (const ApplyDef& d : defs) {
    RETURN_IF_ERROR(RegisterApply(ops, d, /*resource=*/false));
    RETURN_IF_ERROR(RegisterApply(ops, d, /*resource=*/true));
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

Node* ResourceApplyGradientDescent(const Scope& s, Input var, Input alpha, Input delta,
                                   const ApplyGradientDescentAttrs& attrs, std::source_location loc) {
  return s.Op("ResourceApplyGradientDescent", loc)
      .Input(var)
      .Input(alpha)
      .Input(delta)
      .Attr("use_locking", attrs.use_locking)
      .Finalize();
}

}  // namespace ops
}  // namespace sluice
