// Optimizers: graph builders that add the backward pass of a loss and the
// training ops updating its variables, plus a global step counter.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), 0.0f);
//   Output loss = ops::Square(s, ops::Sub(s, w.var, 3.0f));
//   GlobalStep step = CreateGlobalStep(s);
//   AdamOptimizer adam(0.1);
//   ASSIGN_OR_RETURN(Node* train, adam.Minimize(s, loss, {w.var}, &step.ref));
//   Node* init = ops::GlobalVariablesInitializer(s);   // w, global_step, slots
//   // sess->Run({}, {}, {init});  then sess->Run({}, {}, {train}) per step.
//
// Initializers: optimizers create variables of their own — Momentum's
// "<var>/Momentum" accumulators, Adam's "<var>/Adam" (m) and "<var>/Adam_1"
// (v) slots and its "beta1_power" / "beta2_power" accumulators — each
// colocated with the variable it serves and initialized by an Assign node
// "<slot>/Assign". They must run before the first training step: either
// ops::GlobalVariablesInitializer(scope) built after Minimize (it finds every
// "<var>/Assign"), or group Optimizer::initializers() yourself.
//
// Slots need variables whose shape is fully defined. The train op returned
// by Minimize / ApplyGradients is a NoOp (named after the optimizer) that
// runs after every update and, when a global step is given, after it has
// been incremented by one (AssignAdd).
//
// Errors: InvalidArgument when no variable gets a gradient, when a variable's
// shape is not fully defined (slots), or for mixed dtypes (Adam); errors of
// AddGradients and of graph building, naming the node.
// Thread-compatible: build from one thread. Ownership: nodes belong to the
// scope's graph; an Optimizer holds no graph state besides initializers().
#ifndef SLUICE_OPS_TRAINING_OPTIMIZERS_H_
#define SLUICE_OPS_TRAINING_OPTIMIZERS_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/indexed_slices.h"
#include "graph/scope.h"

namespace sluice {

// An int64 scalar VariableV2 "global_step" and its initializer (to 0),
// "global_step/Assign".
struct GlobalStep {
  Output ref;
  Node* initializer = nullptr;
};
// The name is made unique ("global_step_1") when taken. On error the scope
// records it and both fields are null.
GlobalStep CreateGlobalStep(const Scope& scope);

// A variable and its gradient: dense (`grad`), or, for a variable the loss
// reads through gathers (an embedding table), the rows they touched
// (`sparse_grad`, graph/indexed_slices.h). At most one is set; neither when
// the loss does not depend on var.
struct GradAndVar {
  Output grad;
  Output var;  // a variable's ref output
  IndexedSlices sparse_grad;

  bool has_grad() const { return grad.valid() || sparse_grad.values.valid(); }
};

// Every sparse gradient of `grads_and_vars` made dense (an IndexedSlicesToDense
// node), for code that combines dense gradients only.
std::vector<GradAndVar> DenseGradients(const Scope& scope,
                                       absl::Span<const GradAndVar> grads_and_vars);

// `slices` with each index once, the values of a repeated index summed
// (Unique, then UnsortedSegmentSum), as TensorFlow's optimizers do before a
// sparse update that is not a plain sum.
IndexedSlices DeduplicateIndexedSlices(const Scope& scope, const IndexedSlices& slices);

class Optimizer {
 public:
  explicit Optimizer(std::string name) : name_(std::move(name)) {}
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  const std::string& name() const { return name_; }

  // d(loss)/d(var) for each var (AddGradientsWithSlices: a var read through
  // gathers gets a sparse_grad); a var the loss does not depend on gets none.
  absl::StatusOr<std::vector<GradAndVar>> ComputeGradients(const Scope& scope, Output loss,
                                                           absl::Span<const Output> vars);

  // One training op per valid grad (ApplyDense, or ApplySparse for a
  // sparse_grad: only the touched rows change), grouped into the returned train op; then
  // `global_step` (an int64 variable) += 1 when given. Pairs with invalid
  // grads are skipped; InvalidArgument when none is valid.
  absl::StatusOr<Node*> ApplyGradients(const Scope& scope,
                                       absl::Span<const GradAndVar> grads_and_vars,
                                       const Output* global_step = nullptr);

  // ComputeGradients then ApplyGradients.
  absl::StatusOr<Node*> Minimize(const Scope& scope, Output loss, absl::Span<const Output> vars,
                                 const Output* global_step = nullptr);

  // Initializers of the variables this optimizer has created so far.
  const std::vector<Node*>& initializers() const { return initializers_; }

  // The slot `slot_name` ("momentum"; Adam: "m", "v") of variable `var`, or
  // an invalid Output when there is none (yet).
  Output GetSlot(const Output& var, std::string_view slot_name) const;

 protected:
  friend class PerVariableOptimizer;  // calls its parts' hooks below

  // Called once per ApplyGradients before the updates, to create slots and
  // accumulators; `scope` is the caller's scope (slots are named after their
  // variables, not under the optimizer's name scope).
  virtual absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) {
    return absl::OkStatus();
  }
  // The update of one variable, built in `scope` (colocated with var).
  virtual absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                           const Output& var) = 0;
  // The update of the rows of var that `grad` names (indices may repeat).
  // The default makes the gradient dense and calls ApplyDense.
  virtual absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                            const Output& var);
  // Extra nodes to run after all `updates` (e.g. Adam's beta powers); the
  // returned nodes join the train op's dependencies.
  virtual absl::StatusOr<std::vector<Node*>> Finish(const Scope& scope,
                                                    absl::Span<Node* const> updates) {
    return std::vector<Node*>(updates.begin(), updates.end());
  }

  // A variable shaped like `var` filled with `value`, named "<var>/<name()>"
  // (made unique: "<var>/Adam_1"), colocated with var, registered as slot
  // `slot_name` of var; its initializer is added to initializers().
  absl::StatusOr<Output> CreateSlot(const Scope& scope, const Output& var,
                                    const std::string& slot_name, double value);
  // A scalar variable named `name` in `scope` initialized to `value`,
  // colocated with `colocate_with`.
  absl::StatusOr<Output> CreateScalarVariable(const Scope& scope, const std::string& name,
                                              DataType dtype, double value,
                                              const Output& colocate_with);
  // `node` once `scope` has no error (else that error); Internal for null.
  static absl::StatusOr<Node*> Built(const Scope& scope, Node* node);

 private:
  std::string name_;
  std::vector<Node*> initializers_;
  // (variable node name, slot name) -> slot variable.
  std::map<std::pair<std::string, std::string>, Output, std::less<>> slots_;
};

// Sparse: ScatterSub of the rows' values times the learning rate.
class GradientDescentOptimizer : public Optimizer {
 public:
  explicit GradientDescentOptimizer(double learning_rate, std::string name = "GradientDescent")
      : Optimizer(std::move(name)), learning_rate_(learning_rate) {}

 protected:
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
};

// Slot "momentum" per variable. Sparse: SparseApplyMomentum on the
// deduplicated rows.
class MomentumOptimizer : public Optimizer {
 public:
  MomentumOptimizer(double learning_rate, double momentum, bool use_nesterov = false,
                    std::string name = "Momentum")
      : Optimizer(std::move(name)),
        learning_rate_(learning_rate),
        momentum_(momentum),
        use_nesterov_(use_nesterov) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
  double momentum_;
  bool use_nesterov_;
};

// Slots "m" and "v" per variable; all variables must share one dtype.
// Sparse as TensorFlow's Adam: repeated rows summed, m and v decay whole,
// the rows' gradients are scattered into them, and var moves by
// lr * m / (sqrt(v) + epsilon) (with Nesterov: the dense rule).
class AdamOptimizer : public Optimizer {
 public:
  explicit AdamOptimizer(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999,
                         double epsilon = 1e-8, bool use_nesterov = false,
                         std::string name = "Adam")
      : Optimizer(std::move(name)),
        learning_rate_(learning_rate),
        beta1_(beta1),
        beta2_(beta2),
        epsilon_(epsilon),
        use_nesterov_(use_nesterov) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;
  absl::StatusOr<std::vector<Node*>> Finish(const Scope& scope,
                                            absl::Span<Node* const> updates) override;

 private:
  double learning_rate_;
  double beta1_;
  double beta2_;
  double epsilon_;
  bool use_nesterov_;
  // Created by Prepare for the ApplyGradients call in progress.
  Output beta1_power_;
  Output beta2_power_;
};

// Slot "accumulator" per variable (initial_accumulator_value), TensorFlow's
// AdagradOptimizer. Sparse: SparseApplyAdagrad on the deduplicated rows.
class AdagradOptimizer : public Optimizer {
 public:
  explicit AdagradOptimizer(double learning_rate, double initial_accumulator_value = 0.1,
                            std::string name = "Adagrad")
      : Optimizer(std::move(name)),
        learning_rate_(learning_rate),
        initial_accumulator_value_(initial_accumulator_value) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
  double initial_accumulator_value_;
};

// Slots "accum" (initial_accumulator_value) and "linear" (0) per variable,
// TensorFlow's FtrlOptimizer (learning_rate_power -0.5 by default; l1 and
// l2 regularization). Sparse: SparseApplyFtrl on the deduplicated rows.
class FtrlOptimizer : public Optimizer {
 public:
  struct Options {
    double learning_rate_power = -0.5;
    double initial_accumulator_value = 0.1;
    double l1 = 0;
    double l2 = 0;
  };
  FtrlOptimizer(double learning_rate, Options options, std::string name = "Ftrl")
      : Optimizer(std::move(name)), learning_rate_(learning_rate), options_(options) {}
  explicit FtrlOptimizer(double learning_rate) : FtrlOptimizer(learning_rate, Options()) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
  Options options_;
};

// TensorFlow 1.x's RMSPropOptimizer: slots "rms" (ones), "mg" (zeros,
// centered only) and "momentum" (zeros) per variable, in that order (so
// named "<var>/RMSProp", "<var>/RMSProp_1", ...). ApplyRMSProp, or
// ApplyCenteredRMSProp when centered (the denominator is the gradient's
// variance estimate, not its second moment). Sparse: SparseApply(Centered)RMSProp
// on the deduplicated rows.
class RMSPropOptimizer : public Optimizer {
 public:
  struct Options {
    double decay = 0.9;  // rho
    double momentum = 0;
    double epsilon = 1e-10;
    bool centered = false;
  };
  RMSPropOptimizer(double learning_rate, Options options, std::string name = "RMSProp")
      : Optimizer(std::move(name)), learning_rate_(learning_rate), options_(options) {}
  explicit RMSPropOptimizer(double learning_rate) : RMSPropOptimizer(learning_rate, Options()) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
  Options options_;
};

// TensorFlow 1.x's AdadeltaOptimizer (learning_rate 0.001, rho 0.95,
// epsilon 1e-8 by default): slots "accum" and "accum_update" (zeros) per
// variable; ApplyAdadelta. Sparse: SparseApplyAdadelta on the deduplicated
// rows.
class AdadeltaOptimizer : public Optimizer {
 public:
  explicit AdadeltaOptimizer(double learning_rate = 0.001, double rho = 0.95,
                             double epsilon = 1e-8, std::string name = "Adadelta")
      : Optimizer(std::move(name)), learning_rate_(learning_rate), rho_(rho), epsilon_(epsilon) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;

 private:
  double learning_rate_;
  double rho_;
  double epsilon_;
};

// Each variable updated by its own optimizer, as TensorFlow's wide & deep
// estimators train the linear part with FTRL and the deep part with
// Adagrad: one ApplyGradients (and so one SyncReplicas, which takes one
// optimizer) builds every update. A variable named in no route goes to
// `fallback`. The routed optimizers keep their own slots (GetSlot on them)
// and initializers; this one's name names its train op.
//
//   FtrlOptimizer ftrl(0.1);  AdagradOptimizer adagrad(0.05);
//   PerVariableOptimizer opt({{&ftrl, wide_vars}}, &adagrad);
//   ASSIGN_OR_RETURN(Node* train, opt.Minimize(s, loss, all_vars, &step.ref));
class PerVariableOptimizer : public Optimizer {
 public:
  struct Route {
    Optimizer* optimizer;
    std::vector<Output> variables;
  };
  PerVariableOptimizer(std::vector<Route> routes, Optimizer* fallback,
                       std::string name = "PerVariable")
      : Optimizer(std::move(name)), routes_(std::move(routes)), fallback_(fallback) {}

 protected:
  absl::Status Prepare(const Scope& scope, absl::Span<const GradAndVar> grads_and_vars) override;
  absl::StatusOr<Node*> ApplyDense(const Scope& scope, const Output& grad,
                                   const Output& var) override;
  absl::StatusOr<Node*> ApplySparse(const Scope& scope, const IndexedSlices& grad,
                                    const Output& var) override;
  absl::StatusOr<std::vector<Node*>> Finish(const Scope& scope,
                                            absl::Span<Node* const> updates) override;

 private:
  Optimizer* For(const Output& var) const;

  std::vector<Route> routes_;
  Optimizer* fallback_;
  std::map<Optimizer*, std::vector<Node*>> updates_by_optimizer_;  // this ApplyGradients'

};

}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_OPTIMIZERS_H_
