// Optimizers: backward pass (AddGradients) plus training ops per variable.
#include "ops/training/optimizers.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/gradients.h"
#include "base/status_macros.h"
#include "ops/array/array_ops.h"
#include "ops/array/index_ops.h"
#include "ops/state/scatter_ops.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

// `full` relative to the scope's name prefix, for WithOpName.
std::string RelativeName(const Scope& s, std::string_view full) {
  const std::string& prefix = s.name_prefix();
  if (!prefix.empty() && full.starts_with(prefix)) full.remove_prefix(prefix.size());
  return std::string(full);
}

// A literal of `shape` whose every element is `value` (one *_val entry,
// repeated by TensorFlow's fill rule).
absl::StatusOr<::tensorflow::TensorProto> FilledProto(DataType dtype, const TensorShape& shape,
                                                      double value) {
  ::tensorflow::TensorProto proto;
  proto.set_dtype(dtype);
  shape.ToProto(proto.mutable_tensor_shape());
  switch (dtype) {
    case DT_FLOAT:
      proto.add_float_val(static_cast<float>(value));
      break;
    case DT_DOUBLE:
      proto.add_double_val(value);
      break;
    case DT_INT32:
      proto.add_int_val(static_cast<int32_t>(value));
      break;
    case DT_INT64:
      proto.add_int64_val(static_cast<int64_t>(value));
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer variables of type ", DataTypeName(dtype), " are not supported"));
  }
  return proto;
}

absl::Status CheckIsVariable(const std::string& optimizer, const Output& var) {
  if (!var.valid()) {
    return absl::InvalidArgumentError(absl::StrCat(optimizer, ": a variable is invalid"));
  }
  if (!IsRefType(var.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(optimizer, ": ", var.node->DebugName(),
                                                   " is not a variable (its output is ",
                                                   DataTypeName(var.dtype()), ", not a ref)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Node*> Optimizer::Built(const Scope& scope, Node* node) {
  RETURN_IF_ERROR(scope.status());
  if (node == nullptr) return absl::InternalError("node was not built");
  return node;
}

std::vector<GradAndVar> DenseGradients(const Scope& scope,
                                       absl::Span<const GradAndVar> grads_and_vars) {
  std::vector<GradAndVar> out(grads_and_vars.begin(), grads_and_vars.end());
  for (GradAndVar& gv : out) {
    if (!gv.sparse_grad.values.valid()) continue;
    const Scope s = scope.NewSubScope(absl::StrCat(gv.var.node->name(), "_grad"));
    gv.grad = IndexedSlicesToDense(s, gv.sparse_grad);
    gv.sparse_grad = IndexedSlices();
  }
  return out;
}

IndexedSlices DeduplicateIndexedSlices(const Scope& scope, const IndexedSlices& slices) {
  const Scope s = scope.NewSubScope("Deduplicate");
  ops::UniqueOutputs unique = ops::Unique(s, slices.indices, slices.indices.dtype());
  const Output rows = ops::Size(s, unique.y, {.out_type = slices.indices.dtype()});
  IndexedSlices out;
  out.values = ops::UnsortedSegmentSum(s, slices.values, unique.idx, rows);
  out.indices = unique.y;
  out.dense_shape = slices.dense_shape;
  return out;
}

GlobalStep CreateGlobalStep(const Scope& s) {
  ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("global_step"), Input(int64_t{0}));
  return {v.var, v.initializer};
}

absl::StatusOr<std::vector<GradAndVar>> Optimizer::ComputeGradients(const Scope& scope, Output loss,
                                                                    absl::Span<const Output> vars) {
  RETURN_IF_ERROR(scope.status());
  if (!loss.valid()) return absl::InvalidArgumentError(absl::StrCat(name_, ": loss is invalid"));
  for (const Output& var : vars) RETURN_IF_ERROR(CheckIsVariable(name_, var));
  ASSIGN_OR_RETURN(std::vector<Gradient> grads, AddGradientsWithSlices(scope, {loss}, vars));
  if (grads.size() != vars.size()) {
    return absl::InternalError(absl::StrCat(name_, ": AddGradients returned ", grads.size(),
                                            " gradients for ", vars.size(), " variables"));
  }
  std::vector<GradAndVar> out;
  out.reserve(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    GradAndVar gv;
    gv.var = vars[i];
    if (grads[i].sparse()) {
      gv.sparse_grad = grads[i].slices;
    } else {
      gv.grad = grads[i].dense;
    }
    out.push_back(gv);
  }
  return out;
}

absl::StatusOr<Node*> Optimizer::ApplyGradients(const Scope& scope,
                                                absl::Span<const GradAndVar> grads_and_vars,
                                                const Output* global_step) {
  RETURN_IF_ERROR(scope.status());
  std::vector<GradAndVar> valid;
  std::vector<std::string> names;
  for (const GradAndVar& gv : grads_and_vars) {
    RETURN_IF_ERROR(CheckIsVariable(name_, gv.var));
    names.push_back(gv.var.node->name());
    if (gv.has_grad()) valid.push_back(gv);
  }
  if (valid.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": no gradients for any variable (",
                                                   absl::StrJoin(names, ", "),
                                                   "); check that the loss depends on them"));
  }
  if (global_step != nullptr) {
    RETURN_IF_ERROR(CheckIsVariable(name_, *global_step));
    if (BaseType(global_step->dtype()) != DT_INT64) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": global_step must be an int64 variable, got ",
                       DataTypeName(global_step->dtype())));
    }
  }
  RETURN_IF_ERROR(Prepare(scope, valid));
  const Scope opt_scope = scope.NewSubScope(name_);
  std::vector<Node*> updates;
  for (const GradAndVar& gv : valid) {
    const Scope update_scope =
        opt_scope.NewSubScope(absl::StrCat("update_", RelativeName(scope, gv.var.node->name())))
            .ColocateWith(gv.var);
    ASSIGN_OR_RETURN(Node * update, gv.grad.valid()
                                        ? ApplyDense(update_scope, gv.grad, gv.var)
                                        : ApplySparse(update_scope, gv.sparse_grad, gv.var));
    updates.push_back(update);
  }
  ASSIGN_OR_RETURN(std::vector<Node*> finish, Finish(opt_scope, updates));
  Node* train = nullptr;
  if (global_step == nullptr) {
    train = ops::GroupDeps(scope.WithOpName(name_), finish);
  } else {
    Node* update = ops::GroupDeps(opt_scope.WithOpName("update"), finish);
    ASSIGN_OR_RETURN(update, Built(scope, update));
    const std::vector<Node*> after_update = {update};
    // The increment's 1 is built colocated with the step too: a literal
    // would follow the scope's device, which colocation leaves unset.
    const Scope at_step = scope.ColocateWith(*global_step);
    Output one = ops::Const(at_step.WithOpName("one"), int64_t{1});
    Output increment = ops::AssignAdd(at_step.WithControlDependencies(after_update),
                                      *global_step, one);
    RETURN_IF_ERROR(scope.status());
    const std::vector<Node*> after_increment = {increment.node};
    train = ops::GroupDeps(scope.WithOpName(name_), after_increment);
  }
  return Built(scope, train);
}

absl::StatusOr<Node*> Optimizer::Minimize(const Scope& scope, Output loss,
                                          absl::Span<const Output> vars,
                                          const Output* global_step) {
  ASSIGN_OR_RETURN(std::vector<GradAndVar> grads_and_vars, ComputeGradients(scope, loss, vars));
  return ApplyGradients(scope, grads_and_vars, global_step);
}

absl::StatusOr<Node*> Optimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                             const Output& var) {
  return ApplyDense(scope, IndexedSlicesToDense(scope, grad), var);
}

Output Optimizer::GetSlot(const Output& var, std::string_view slot_name) const {
  if (!var.valid()) return Output();
  auto it = slots_.find(std::make_pair(var.node->name(), std::string(slot_name)));
  return it == slots_.end() ? Output() : it->second;
}

absl::StatusOr<Output> Optimizer::CreateSlot(const Scope& scope, const Output& var,
                                             const std::string& slot_name, double value) {
  const TensorShape& shape = var.shape();
  if (!shape.IsFullyDefined()) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": variable ", var.node->name(),
                                                   " needs a fully defined shape for its '",
                                                   slot_name, "' slot, has ", shape.DebugString()));
  }
  ASSIGN_OR_RETURN(::tensorflow::TensorProto init,
                   FilledProto(BaseType(var.dtype()), shape, value));
  const std::string name = absl::StrCat(RelativeName(scope, var.node->name()), "/", name_);
  ops::VariableAndInit slot =
      ops::VariableWithInit(scope.ColocateWith(var).WithOpName(name), Input(std::move(init)));
  RETURN_IF_ERROR(scope.status());
  initializers_.push_back(slot.initializer);
  slots_[std::make_pair(var.node->name(), slot_name)] = slot.var;
  return slot.var;
}

absl::StatusOr<Output> Optimizer::CreateScalarVariable(const Scope& scope, const std::string& name,
                                                       DataType dtype, double value,
                                                       const Output& colocate_with) {
  ASSIGN_OR_RETURN(::tensorflow::TensorProto init, FilledProto(dtype, TensorShape(), value));
  ops::VariableAndInit v = ops::VariableWithInit(scope.ColocateWith(colocate_with).WithOpName(name),
                                                 Input(std::move(init)));
  RETURN_IF_ERROR(scope.status());
  initializers_.push_back(v.initializer);
  return v.var;
}

absl::StatusOr<Node*> GradientDescentOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                           const Output& var) {
  Output out = ops::ApplyGradientDescent(scope, var, Input(learning_rate_), grad);
  return Built(scope, out.node);
}

absl::StatusOr<Node*> GradientDescentOptimizer::ApplySparse(const Scope& scope,
                                                            const IndexedSlices& grad,
                                                            const Output& var) {
  // ScatterSub sums repeated rows itself.
  const Output delta =
      scope.Op("Mul").Input(grad.values).Input(Input(learning_rate_)).Finalize1();
  Output out = ops::ScatterSub(scope, var, grad.indices, delta, {.use_locking = false});
  return Built(scope, out.node);
}

absl::Status MomentumOptimizer::Prepare(const Scope& scope,
                                        absl::Span<const GradAndVar> grads_and_vars) {
  for (const GradAndVar& gv : grads_and_vars) {
    if (GetSlot(gv.var, "momentum").valid()) continue;
    RETURN_IF_ERROR(CreateSlot(scope, gv.var, "momentum", 0.0).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> MomentumOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                    const Output& var) {
  Output out = ops::ApplyMomentum(scope, var, GetSlot(var, "momentum"), Input(learning_rate_), grad,
                                  Input(momentum_), {.use_nesterov = use_nesterov_});
  return Built(scope, out.node);
}

absl::StatusOr<Node*> MomentumOptimizer::ApplySparse(const Scope& scope,
                                                     const IndexedSlices& grad,
                                                     const Output& var) {
  const IndexedSlices unique = DeduplicateIndexedSlices(scope, grad);
  Output out = ops::SparseApplyMomentum(scope, var, GetSlot(var, "momentum"),
                                        Input(learning_rate_), unique.values, unique.indices,
                                        Input(momentum_), {.use_nesterov = use_nesterov_});
  return Built(scope, out.node);
}

absl::Status AdamOptimizer::Prepare(const Scope& scope,
                                    absl::Span<const GradAndVar> grads_and_vars) {
  // The beta power accumulators live with the variable first by name.
  const GradAndVar* first = &grads_and_vars.front();
  const DataType dtype = BaseType(first->var.dtype());
  for (const GradAndVar& gv : grads_and_vars) {
    if (BaseType(gv.var.dtype()) != dtype) {
      return absl::InvalidArgumentError(
          absl::StrCat(name(), ": all variables must have one dtype; ", first->var.node->name(),
                       " is ", DataTypeName(dtype), " but ", gv.var.node->name(), " is ",
                       DataTypeName(BaseType(gv.var.dtype()))));
    }
    if (gv.var.node->name() < first->var.node->name()) first = &gv;
  }
  ASSIGN_OR_RETURN(beta1_power_,
                   CreateScalarVariable(scope, "beta1_power", dtype, beta1_, first->var));
  ASSIGN_OR_RETURN(beta2_power_,
                   CreateScalarVariable(scope, "beta2_power", dtype, beta2_, first->var));
  for (const GradAndVar& gv : grads_and_vars) {
    if (!GetSlot(gv.var, "m").valid())
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "m", 0.0).status());
    if (!GetSlot(gv.var, "v").valid())
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "v", 0.0).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> AdamOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                const Output& var) {
  Output out = ops::ApplyAdam(scope, var, GetSlot(var, "m"), GetSlot(var, "v"), beta1_power_,
                              beta2_power_, Input(learning_rate_), Input(beta1_), Input(beta2_),
                              Input(epsilon_), grad, {.use_nesterov = use_nesterov_});
  return Built(scope, out.node);
}

absl::StatusOr<Node*> AdamOptimizer::ApplySparse(const Scope& scope,
                                                 const IndexedSlices& repeated,
                                                 const Output& var) {
  // v takes squares: a repeated row's gradients are summed first.
  const IndexedSlices grad = DeduplicateIndexedSlices(scope, repeated);
  if (use_nesterov_) return Optimizer::ApplySparse(scope, grad, var);
  auto mul = [&](const Input& a, const Input& b) {
    return scope.Op("Mul").Input(a).Input(b).Finalize1();
  };
  auto sub = [&](const Input& a, const Input& b) {
    return scope.Op("Sub").Input(a).Input(b).Finalize1();
  };
  // lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
  const Output lr_t = scope.Op("RealDiv")
                          .Input(mul(Input(learning_rate_),
                                     scope.Op("Sqrt").Input(sub(Input(1.0), beta2_power_)).Finalize1()))
                          .Input(sub(Input(1.0), beta1_power_))
                          .Finalize1();
  // m = beta1 * m, then m[rows] += (1 - beta1) * g (ScatterAdd sums repeats).
  const Output m = GetSlot(var, "m");
  const Output m_decayed = ops::Assign(scope, m, mul(m, Input(beta1_)));
  const Output m_t = ops::ScatterAdd(scope, m_decayed, grad.indices,
                                     mul(grad.values, Input(1.0 - beta1_)), {.use_locking = false});
  const Output v = GetSlot(var, "v");
  const Output v_decayed = ops::Assign(scope, v, mul(v, Input(beta2_)));
  const Output v_t = ops::ScatterAdd(scope, v_decayed, grad.indices,
                                     mul(mul(grad.values, grad.values), Input(1.0 - beta2_)),
                                     {.use_locking = false});
  const Output step = scope.Op("RealDiv")
                          .Input(mul(lr_t, m_t))
                          .Input(scope.Op("AddV2")
                                     .Input(scope.Op("Sqrt").Input(v_t).Finalize1())
                                     .Input(Input(epsilon_))
                                     .Finalize1())
                          .Finalize1();
  Output out = ops::AssignSub(scope, var, step);
  return Built(scope, out.node);
}

absl::StatusOr<std::vector<Node*>> AdamOptimizer::Finish(const Scope& scope,
                                                         absl::Span<Node* const> updates) {
  std::vector<Node*> deps(updates.begin(), updates.end());
  const Scope after = scope.WithControlDependencies(updates).ColocateWith(beta1_power_);
  for (const auto& [power, beta] :
       {std::make_pair(beta1_power_, beta1_), std::make_pair(beta2_power_, beta2_)}) {
    Output next = after.Op("Mul").Input(power).Input(Input(beta)).Finalize1();
    Output assign = ops::Assign(after, power, next);
    ASSIGN_OR_RETURN(Node * node, Built(scope, assign.node));
    deps.push_back(node);
  }
  return deps;
}

absl::Status AdagradOptimizer::Prepare(const Scope& scope,
                                       absl::Span<const GradAndVar> grads_and_vars) {
  for (const GradAndVar& gv : grads_and_vars) {
    if (GetSlot(gv.var, "accumulator").valid()) continue;
    RETURN_IF_ERROR(
        CreateSlot(scope, gv.var, "accumulator", initial_accumulator_value_).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> AdagradOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                   const Output& var) {
  Output out =
      ops::ApplyAdagrad(scope, var, GetSlot(var, "accumulator"), Input(learning_rate_), grad);
  return Built(scope, out.node);
}

absl::StatusOr<Node*> AdagradOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                                    const Output& var) {
  const IndexedSlices unique = DeduplicateIndexedSlices(scope, grad);
  Output out = ops::SparseApplyAdagrad(scope, var, GetSlot(var, "accumulator"),
                                       Input(learning_rate_), unique.values, unique.indices);
  return Built(scope, out.node);
}

absl::Status FtrlOptimizer::Prepare(const Scope& scope,
                                    absl::Span<const GradAndVar> grads_and_vars) {
  for (const GradAndVar& gv : grads_and_vars) {
    if (!GetSlot(gv.var, "accum").valid()) {
      RETURN_IF_ERROR(
          CreateSlot(scope, gv.var, "accum", options_.initial_accumulator_value).status());
    }
    if (!GetSlot(gv.var, "linear").valid()) {
      RETURN_IF_ERROR(CreateSlot(scope, gv.var, "linear", 0.0).status());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Node*> FtrlOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                const Output& var) {
  Output out = ops::ApplyFtrl(scope, var, GetSlot(var, "accum"), GetSlot(var, "linear"), grad,
                              Input(learning_rate_), Input(options_.l1), Input(options_.l2),
                              Input(options_.learning_rate_power));
  return Built(scope, out.node);
}

absl::StatusOr<Node*> FtrlOptimizer::ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                                 const Output& var) {
  const IndexedSlices unique = DeduplicateIndexedSlices(scope, grad);
  Output out = ops::SparseApplyFtrl(scope, var, GetSlot(var, "accum"), GetSlot(var, "linear"),
                                    unique.values, unique.indices, Input(learning_rate_),
                                    Input(options_.l1), Input(options_.l2),
                                    Input(options_.learning_rate_power));
  return Built(scope, out.node);
}

Optimizer* PerVariableOptimizer::For(const Output& var) const {
  for (const Route& r : routes_) {
    for (const Output& v : r.variables) {
      if (v.node == var.node && v.index == var.index) return r.optimizer;
    }
  }
  return fallback_;
}

absl::Status PerVariableOptimizer::Prepare(const Scope& scope,
                                           absl::Span<const GradAndVar> grads_and_vars) {
  updates_by_optimizer_.clear();
  std::vector<Optimizer*> order;
  std::map<Optimizer*, std::vector<GradAndVar>> parts;
  for (const GradAndVar& gv : grads_and_vars) {
    Optimizer* o = For(gv.var);
    if (o == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name(), ": variable ", gv.var.node->name(),
                                                     " is in no route and there is no fallback"));
    }
    if (parts.find(o) == parts.end()) order.push_back(o);
    parts[o].push_back(gv);
  }
  for (Optimizer* o : order) RETURN_IF_ERROR(o->Prepare(scope, parts[o]));
  return absl::OkStatus();
}

absl::StatusOr<Node*> PerVariableOptimizer::ApplyDense(const Scope& scope, const Output& grad,
                                                       const Output& var) {
  Optimizer* o = For(var);
  ASSIGN_OR_RETURN(Node * update, o->ApplyDense(scope, grad, var));
  updates_by_optimizer_[o].push_back(update);
  return update;
}

absl::StatusOr<Node*> PerVariableOptimizer::ApplySparse(const Scope& scope,
                                                        const IndexedSlices& grad,
                                                        const Output& var) {
  Optimizer* o = For(var);
  ASSIGN_OR_RETURN(Node * update, o->ApplySparse(scope, grad, var));
  updates_by_optimizer_[o].push_back(update);
  return update;
}

absl::StatusOr<std::vector<Node*>> PerVariableOptimizer::Finish(const Scope& scope,
                                                                absl::Span<Node* const> updates) {
  // Each optimizer finishes after its own updates (Adam's beta powers), in
  // the order of the routes.
  std::vector<Optimizer*> all;
  for (const Route& r : routes_) all.push_back(r.optimizer);
  if (fallback_ != nullptr) all.push_back(fallback_);
  std::vector<Node*> deps;
  std::set<Optimizer*> finished;
  for (Optimizer* o : all) {
    auto it = updates_by_optimizer_.find(o);
    if (!finished.insert(o).second || it == updates_by_optimizer_.end()) continue;
    ASSIGN_OR_RETURN(std::vector<Node*> done, o->Finish(scope, it->second));
    deps.insert(deps.end(), done.begin(), done.end());
  }
  return deps;
}

}  // namespace sluice
