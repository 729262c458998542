// Training op definitions, shape functions and wrappers (kernels:
// training_kernels.cc).
#include "ops/training/training_ops.h"

#include "ops/training/multi_apply_ops.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
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
  // (name, is a variable); a name with its own type ("global_step: int64")
  // keeps it, other inputs are T.
  std::vector<std::pair<const char*, bool>> inputs;
  std::vector<const char*> attrs;                    // beyond T and use_locking
  std::vector<int> same;                             // inputs shaped like var
  std::vector<int> scalars;
  int sparse_grad = -1;  // grad's input: the Sparse forms insert indices after it; -1: none
  bool resource_only = false;  // TensorFlow has no ref ("Apply*") forms
};

// A SparseApply* op's shape: the scalars (positions after grad moved up by
// one) must be scalars, the slots merge with var, indices is a vector and
// grad is [len(indices)] + var.shape[1:]; the output has var's shape.
absl::Status SparseApplyShape(InferenceContext* c, const std::vector<int>& same, int grad,
                              const std::vector<int>& scalars) {
  RETURN_IF_ERROR(CheckScalars(c, scalars));
  TensorShape var = c->input(0);
  for (int i : same) {
    absl::StatusOr<TensorShape> m = var.Merge(c->input(i));
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(c->node().op(), ": var has shape ", c->input(0).DebugString(), " but ",
                       ArgName(*c, i), " has shape ", c->input(i).DebugString()));
    }
    var = *std::move(m);
  }
  const TensorShape& g = c->input(grad);
  const TensorShape& indices = c->input(grad + 1);
  if (indices.rank() >= 0 && indices.rank() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        c->node().op(), ": indices must be one-dimensional, got shape ", indices.DebugString()));
  }
  if (var.rank() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": var must be at least 1 dimensional"));
  }
  bool ok = g.rank() < 0 || var.rank() < 0 || g.rank() == var.rank();
  if (ok && g.rank() > 0 && indices.rank() == 1) {
    ok = g.dim(0) < 0 || indices.dim(0) < 0 || g.dim(0) == indices.dim(0);
  }
  for (int d = 1; ok && g.rank() > 0 && d < var.rank(); ++d) {
    ok = g.dim(d) < 0 || var.dim(d) < 0 || g.dim(d) == var.dim(d);
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(c->node().op(), ": grad must have shape [len(indices)] + var.shape[1:]; var ",
                     var.DebugString(), ", indices ", indices.DebugString(), ", grad ",
                     g.DebugString()));
  }
  c->set_output(0, std::move(var));
  return absl::OkStatus();
}

// An input's OpDef spec: a variable is a Ref(T) or a resource, an input
// whose name carries a type keeps it, any other is T.
std::string InputSpec(const char* name, bool is_var, bool resource) {
  if (is_var) return absl::StrCat(name, resource ? ": resource" : ": Ref(T)");
  if (absl::string_view(name).find(':') != absl::string_view::npos) return name;
  return absl::StrCat(name, ": T");
}

std::string ApplyOpName(const ApplyDef& d, bool resource, bool sparse) {
  const std::string name = sparse ? absl::StrCat("Sparse", d.name) : std::string(d.name);
  return resource ? absl::StrCat("Resource", name) : name;
}

// The Sparse form of `d`: indices (Tindices) after grad.
absl::Status RegisterSparseApply(OpRegistry* ops, const ApplyDef& d, bool resource) {
  const std::string op = ApplyOpName(d, resource, /*sparse=*/true);
  OpDefBuilder b(op);
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const auto& [name, is_var] = d.inputs[i];
    // TensorFlow names the sparse gradient "grad" (the dense
    // ProximalGradientDescent's is "delta").
    const bool is_grad = static_cast<int>(i) == d.sparse_grad;
    b.Input(InputSpec(is_grad ? "grad" : name, is_var, resource));
    if (is_grad) b.Input("indices: Tindices");
  }
  if (!resource) b.Output("out: Ref(T)");
  b.Attr(kTypes).Attr("Tindices: {int32, int64}").Attr("use_locking: bool = false");
  for (const char* a : d.attrs) b.Attr(a);
  std::vector<int> scalars;
  for (int i : d.scalars) scalars.push_back(i > d.sparse_grad ? i + 1 : i);
  std::vector<int> same;
  for (int i : d.same) {
    if (i != d.sparse_grad) same.push_back(i);
  }
  const int grad = d.sparse_grad;
  if (resource) {
    b.SetIsStateful();
    b.SetShapeFn([scalars](InferenceContext* c) { return CheckScalars(c, scalars); });
  } else {
    b.SetShapeFn([same, grad, scalars](InferenceContext* c) {
      return SparseApplyShape(c, same, grad, scalars);
    });
  }
  RETURN_IF_ERROR(ops->Register(b));
  return ops->SetNoGradient(op);
}

absl::Status RegisterApply(OpRegistry* ops, const ApplyDef& d, bool resource) {
  OpDefBuilder b(resource ? absl::StrCat("Resource", d.name) : std::string(d.name));
  for (const auto& [name, is_var] : d.inputs) b.Input(InputSpec(name, is_var, resource));
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
       {2, 4},
       3},
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
      // The adaptive rules (kernels: training_kernels_adaptive.cc, _ftrl.cc),
      // each with its Sparse forms.
      {"ApplyAdagrad",
       {{"var", true}, {"accum", true}, {"lr", false}, {"grad", false}},
       {"update_slots: bool = true"},
       {1, 3},
       {2},
       3},
      {"ApplyAdagradV2",
       {{"var", true}, {"accum", true}, {"lr", false}, {"epsilon", false}, {"grad", false}},
       {"update_slots: bool = true"},
       {1, 4},
       {2, 3},
       4},
      {"ApplyProximalGradientDescent",
       {{"var", true}, {"alpha", false}, {"l1", false}, {"l2", false}, {"delta", false}},
       {},
       {4},
       {1, 2, 3},
       4},
      {"ApplyProximalAdagrad",
       {{"var", true}, {"accum", true}, {"lr", false}, {"l1", false}, {"l2", false},
        {"grad", false}},
       {},
       {1, 5},
       {2, 3, 4},
       5},
      {"ApplyAdadelta",
       {{"var", true}, {"accum", true}, {"accum_update", true}, {"lr", false}, {"rho", false},
        {"epsilon", false}, {"grad", false}},
       {},
       {1, 2, 6},
       {3, 4, 5},
       6},
      {"ApplyRMSProp",
       {{"var", true}, {"ms", true}, {"mom", true}, {"lr", false}, {"rho", false},
        {"momentum", false}, {"epsilon", false}, {"grad", false}},
       {},
       {1, 2, 7},
       {3, 4, 5, 6},
       7},
      {"ApplyCenteredRMSProp",
       {{"var", true}, {"mg", true}, {"ms", true}, {"mom", true}, {"lr", false}, {"rho", false},
        {"momentum", false}, {"epsilon", false}, {"grad", false}},
       {},
       {1, 2, 3, 8},
       {4, 5, 6, 7},
       8},
      {"ApplyFtrl",
       {{"var", true}, {"accum", true}, {"linear", true}, {"grad", false}, {"lr", false},
        {"l1", false}, {"l2", false}, {"lr_power", false}},
       {"multiply_linear_by_lr: bool = false"},
       {1, 2, 3},
       {4, 5, 6, 7},
       3},
      {"ApplyFtrlV2",
       {{"var", true}, {"accum", true}, {"linear", true}, {"grad", false}, {"lr", false},
        {"l1", false}, {"l2", false}, {"l2_shrinkage", false}, {"lr_power", false}},
       {"multiply_linear_by_lr: bool = false"},
       {1, 2, 3},
       {4, 5, 6, 7, 8},
       3},
      // Adagrad's dual averaging (kernel: training_kernels_adaptive.cc); its
      // step count is int64, as TensorFlow's global step.
      {"ApplyAdagradDA",
       {{"var", true},
        {"gradient_accumulator", true},
        {"gradient_squared_accumulator", true},
        {"grad", false},
        {"lr", false},
        {"l1", false},
        {"l2", false},
        {"global_step: int64", false}},
       {},
       {1, 2, 3},
       {4, 5, 6, 7},
       3},
      // The rules Keras's optimizers added (kernels: training_kernels_keras.cc).
      {"ApplyKerasMomentum",
       {{"var", true}, {"accum", true}, {"lr", false}, {"grad", false}, {"momentum", false}},
       {"use_nesterov: bool = false"},
       {1, 3},
       {2, 4},
       3,
       /*resource_only=*/true},
      {"ApplyAdamWithAmsgrad",
       {{"var", true},
        {"m", true},
        {"v", true},
        {"vhat", true},
        {"beta1_power", false},
        {"beta2_power", false},
        {"lr", false},
        {"beta1", false},
        {"beta2", false},
        {"epsilon", false},
        {"grad", false}},
       {},
       {1, 2, 3, 10},
       {4, 5, 6, 7, 8, 9},
       -1,
       /*resource_only=*/true},
      {"ApplyAdaMax",
       {{"var", true}, {"m", true}, {"v", true}, {"beta1_power", false}, {"lr", false},
        {"beta1", false}, {"beta2", false}, {"epsilon", false}, {"grad", false}},
       {},
       {1, 2, 8},
       {3, 4, 5, 6, 7}},
      // The sign rules (kernels: training_kernels_sign.cc).
      {"ApplyAddSign",
       {{"var", true}, {"m", true}, {"lr", false}, {"alpha", false}, {"sign_decay", false},
        {"beta", false}, {"grad", false}},
       {},
       {1, 6},
       {2, 3, 4, 5}},
      {"ApplyPowerSign",
       {{"var", true}, {"m", true}, {"lr", false}, {"logbase", false}, {"sign_decay", false},
        {"beta", false}, {"grad", false}},
       {},
       {1, 6},
       {2, 3, 4, 5}},
  };
  for (const ApplyDef& d : defs) {
    if (!d.resource_only) RETURN_IF_ERROR(RegisterApply(ops, d, /*resource=*/false));
    RETURN_IF_ERROR(RegisterApply(ops, d, /*resource=*/true));
    if (d.sparse_grad < 0) continue;
    if (!d.resource_only) RETURN_IF_ERROR(RegisterSparseApply(ops, d, /*resource=*/false));
    RETURN_IF_ERROR(RegisterSparseApply(ops, d, /*resource=*/true));
  }
  return RegisterMultiApplyOps(ops);
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

Output SparseApplyMomentum(const Scope& s, Input var, Input accum, Input lr, Input grad,
                           Input indices, Input momentum, const ApplyMomentumAttrs& attrs,
                           std::source_location loc) {
  return s.Op("SparseApplyMomentum", loc)
      .Input(var)
      .Input(accum)
      .Input(lr)
      .Input(grad)
      .Input(indices)
      .Input(momentum)
      .Attr("use_locking", attrs.use_locking)
      .Attr("use_nesterov", attrs.use_nesterov)
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

namespace {

// A ref Apply op with `inputs` in order, T from the first, use_locking and
// the extra bool attrs.
Output ApplyOp(const Scope& s, const char* op, std::initializer_list<Input> inputs,
               bool use_locking, std::initializer_list<std::pair<const char*, bool>> flags,
               std::source_location loc) {
  OpBuilder b = s.Op(op, loc);
  for (const Input& in : inputs) b.Input(in);
  b.Attr("use_locking", use_locking);
  for (const auto& [name, value] : flags) b.Attr(name, value);
  return b.Finalize1();
}

}  // namespace

Output ApplyAdagrad(const Scope& s, Input var, Input accum, Input lr, Input grad,
                    const ApplyAdagradAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "ApplyAdagrad", {var, accum, lr, grad}, attrs.use_locking,
                 {{"update_slots", attrs.update_slots}}, loc);
}

Output SparseApplyAdagrad(const Scope& s, Input var, Input accum, Input lr, Input grad,
                          Input indices, const ApplyAdagradAttrs& attrs,
                          std::source_location loc) {
  return ApplyOp(s, "SparseApplyAdagrad", {var, accum, lr, grad, indices}, attrs.use_locking,
                 {{"update_slots", attrs.update_slots}}, loc);
}

Output ApplyProximalAdagrad(const Scope& s, Input var, Input accum, Input lr, Input l1, Input l2,
                            Input grad, const ApplyAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "ApplyProximalAdagrad", {var, accum, lr, l1, l2, grad}, attrs.use_locking, {},
                 loc);
}

Output SparseApplyProximalAdagrad(const Scope& s, Input var, Input accum, Input lr, Input l1,
                                  Input l2, Input grad, Input indices, const ApplyAttrs& attrs,
                                  std::source_location loc) {
  return ApplyOp(s, "SparseApplyProximalAdagrad", {var, accum, lr, l1, l2, grad, indices},
                 attrs.use_locking, {}, loc);
}

Output ApplyAdadelta(const Scope& s, Input var, Input accum, Input accum_update, Input lr,
                     Input rho, Input epsilon, Input grad, const ApplyAttrs& attrs,
                     std::source_location loc) {
  return ApplyOp(s, "ApplyAdadelta", {var, accum, accum_update, lr, rho, epsilon, grad},
                 attrs.use_locking, {}, loc);
}

Output SparseApplyAdadelta(const Scope& s, Input var, Input accum, Input accum_update, Input lr,
                           Input rho, Input epsilon, Input grad, Input indices,
                           const ApplyAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "SparseApplyAdadelta",
                 {var, accum, accum_update, lr, rho, epsilon, grad, indices}, attrs.use_locking,
                 {}, loc);
}

Output ApplyAdagradDA(const Scope& s, Input var, Input gradient_accumulator,
                      Input gradient_squared_accumulator, Input grad, Input lr, Input l1,
                      Input l2, Input global_step, const ApplyAttrs& attrs,
                      std::source_location loc) {
  return ApplyOp(s, "ApplyAdagradDA",
                 {var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2,
                  global_step},
                 attrs.use_locking, {}, loc);
}

Output SparseApplyAdagradDA(const Scope& s, Input var, Input gradient_accumulator,
                            Input gradient_squared_accumulator, Input grad, Input indices,
                            Input lr, Input l1, Input l2, Input global_step,
                            const ApplyAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "SparseApplyAdagradDA",
                 {var, gradient_accumulator, gradient_squared_accumulator, grad, indices, lr, l1,
                  l2, global_step},
                 attrs.use_locking, {}, loc);
}

Output ApplyRMSProp(const Scope& s, Input var, Input ms, Input mom, Input lr, Input rho,
                    Input momentum, Input epsilon, Input grad, const ApplyAttrs& attrs,
                    std::source_location loc) {
  return ApplyOp(s, "ApplyRMSProp", {var, ms, mom, lr, rho, momentum, epsilon, grad},
                 attrs.use_locking, {}, loc);
}

Output SparseApplyRMSProp(const Scope& s, Input var, Input ms, Input mom, Input lr, Input rho,
                          Input momentum, Input epsilon, Input grad, Input indices,
                          const ApplyAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "SparseApplyRMSProp",
                 {var, ms, mom, lr, rho, momentum, epsilon, grad, indices}, attrs.use_locking, {},
                 loc);
}

Output ApplyCenteredRMSProp(const Scope& s, Input var, Input mg, Input ms, Input mom, Input lr,
                            Input rho, Input momentum, Input epsilon, Input grad,
                            const ApplyAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "ApplyCenteredRMSProp", {var, mg, ms, mom, lr, rho, momentum, epsilon, grad},
                 attrs.use_locking, {}, loc);
}

Output SparseApplyCenteredRMSProp(const Scope& s, Input var, Input mg, Input ms, Input mom,
                                  Input lr, Input rho, Input momentum, Input epsilon, Input grad,
                                  Input indices, const ApplyAttrs& attrs,
                                  std::source_location loc) {
  return ApplyOp(s, "SparseApplyCenteredRMSProp",
                 {var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices}, attrs.use_locking,
                 {}, loc);
}

Output ApplyFtrl(const Scope& s, Input var, Input accum, Input linear, Input grad, Input lr,
                 Input l1, Input l2, Input lr_power, const ApplyFtrlAttrs& attrs,
                 std::source_location loc) {
  return ApplyOp(s, "ApplyFtrl", {var, accum, linear, grad, lr, l1, l2, lr_power},
                 attrs.use_locking, {{"multiply_linear_by_lr", attrs.multiply_linear_by_lr}}, loc);
}

Output SparseApplyFtrl(const Scope& s, Input var, Input accum, Input linear, Input grad,
                       Input indices, Input lr, Input l1, Input l2, Input lr_power,
                       const ApplyFtrlAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "SparseApplyFtrl", {var, accum, linear, grad, indices, lr, l1, l2, lr_power},
                 attrs.use_locking, {{"multiply_linear_by_lr", attrs.multiply_linear_by_lr}}, loc);
}

Output ApplyFtrlV2(const Scope& s, Input var, Input accum, Input linear, Input grad, Input lr,
                   Input l1, Input l2, Input l2_shrinkage, Input lr_power,
                   const ApplyFtrlAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "ApplyFtrlV2", {var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power},
                 attrs.use_locking, {{"multiply_linear_by_lr", attrs.multiply_linear_by_lr}}, loc);
}

Output SparseApplyFtrlV2(const Scope& s, Input var, Input accum, Input linear, Input grad,
                         Input indices, Input lr, Input l1, Input l2, Input l2_shrinkage,
                         Input lr_power, const ApplyFtrlAttrs& attrs, std::source_location loc) {
  return ApplyOp(s, "SparseApplyFtrlV2",
                 {var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power},
                 attrs.use_locking, {{"multiply_linear_by_lr", attrs.multiply_linear_by_lr}}, loc);
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
