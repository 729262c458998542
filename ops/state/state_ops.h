// State ops: TensorFlow 1.x reference variables — VariableV2 (and its older
// name Variable), Assign, AssignAdd, AssignSub, IsVariableInitialized — with
// their CPU kernels, typed graph-building wrappers and initializer helpers.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {1.0f, 2.0f});
//   Output step = ops::AssignAdd(s, w.var, {0.5f, 0.5f});   // Ref(float)
//   Node* init = ops::GlobalVariablesInitializer(s);         // NoOp "init"
//   // sess->Run({}, {}, {"init"});  sess->Run({}, {"AssignAdd"}, {});
//
// A variable lives in its device's ResourceMgr (runtime/resource_mgr.h) under
// the node's shared_name, else its node name, so it persists across runs of
// a session. VariableV2 outputs the variable itself (a ref); a non-ref
// consumer reads its current value. Updates (Assign*, the Apply* training
// ops) hold the variable's lock and are copy-on-write: when a reader still
// holds the current buffer, the update goes to a fresh buffer, so every read
// is a consistent snapshot.
//
// Errors: using an uninitialized variable is FailedPrecondition "Attempting to
// use uninitialized value <name>"; shape mismatches are InvalidArgument naming
// both shapes.
//
// Thread-safety: graph building is thread-compatible (like Scope); kernels
// are thread-safe. Ownership: the Graph owns built nodes; the ResourceMgr owns
// variables.
#ifndef SLUICE_OPS_STATE_STATE_OPS_H_
#define SLUICE_OPS_STATE_STATE_OPS_H_

#include "base/source_location.h"
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/resource_mgr.h"

namespace sluice {

absl::Status RegisterStateOps(OpRegistry* ops);
void RegisterStateKernels(KernelRegistry* kernels);

namespace ops {

struct VariableAttrs {
  std::string container;    // "" : the default container
  std::string shared_name;  // "" : the node's name
};

// VariableV2 of `dtype` and `shape` (may be partly unknown); returns its ref
// output. Default node name "Variable".
Output Variable(const Scope& scope, const TensorShape& shape, DataType dtype,
                const VariableAttrs& attrs = {},
                std::source_location loc = std::source_location::current());

struct AssignAttrs {
  bool validate_shape = true;
  bool use_locking = true;
};
// Sets `ref` to `value`; returns the variable (a ref).
Output Assign(const Scope& scope, Input ref, Input value, const AssignAttrs& attrs = {},
              std::source_location loc = std::source_location::current());

struct AssignUpdateAttrs {
  bool use_locking = false;
};
// ref += value / ref -= value (same shapes); return the variable (a ref).
Output AssignAdd(const Scope& scope, Input ref, Input value, const AssignUpdateAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
Output AssignSub(const Scope& scope, Input ref, Input value, const AssignUpdateAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());

// A bool scalar: whether `ref` has been assigned.
Output IsVariableInitialized(const Scope& scope, Input ref,
                             std::source_location loc = std::source_location::current());

// A variable and the Assign node that initializes it.
struct VariableAndInit {
  Output var;                   // the VariableV2 ref output
  Node* initializer = nullptr;  // Assign named "<var>/Assign"
};

// A variable shaped and typed like `initial_value` (a literal becomes a Const
// "<var>/initial_value"), and its initializer "<var>/Assign", colocated with
// the variable. The variable's name comes from the scope (WithOpName), else
// "Variable". On error the scope records it and both fields are null.
VariableAndInit VariableWithInit(const Scope& scope, Input initial_value,
                                 const VariableAttrs& attrs = {},
                                 std::source_location loc = std::source_location::current());

// A NoOp (default name "group_deps") that runs after every node in `deps`.
Node* GroupDeps(const Scope& scope, absl::Span<Node* const> deps,
                std::source_location loc = std::source_location::current());

// A NoOp named "init" (unless the scope names it) depending on every
// `initializers` node.
Node* GlobalVariablesInitializer(const Scope& scope, absl::Span<Node* const> initializers,
                                 std::source_location loc = std::source_location::current());
// The same over every initializer in the graph: for each VariableV2/Variable
// node "v", the Assign node "v/Assign" when there is one (as VariableWithInit,
// CreateGlobalStep and the optimizers' slots make).
Node* GlobalVariablesInitializer(const Scope& scope,
                                 std::source_location loc = std::source_location::current());

}  // namespace ops

namespace internal {

// For kernels that update variables in place (state and training ops).

// The base of a kernel whose only state is variables of its device, reached
// through a ref or a resource handle (reads, assignments, updates, the
// handle op): a recorded step replays it right, since the recorder tracks
// every variable's buffer (runtime/step_replay.h: a recording is replayed
// only while each variable keeps the buffer it had, and one that moves is
// copied back into it).
class VariableKernel : public OpKernel {
 public:
  bool ReplaysRight() const final { return true; }
};

// Locks a set of variables (duplicates allowed) in address order, so kernels
// locking several variables cannot deadlock; unlocks on destruction.
class VarLockSet {
 public:
  explicit VarLockSet(absl::Span<Var* const> vars);
  ~VarLockSet();
  VarLockSet(const VarLockSet&) = delete;
  VarLockSet& operator=(const VarLockSet&) = delete;

 private:
  std::vector<Var*> locked_;
};

// What a resource variable's handle (VarHandleOp's DT_RESOURCE scalar)
// holds: the variable's container and name in its device's ResourceMgr.
std::string VarHandle(absl::string_view container, absl::string_view name);

// The variable on input `i`: a ref input (VariableV2), or a resource handle
// (VarHandleOp) naming a variable of this device. Internal when the input is
// neither; NotFound when the handle names no variable here.
absl::StatusOr<Var*> VarInput(OpKernelContext* ctx, int i);
// The same, for a kernel that reads the variable's buffer as `dtype`: also
// InvalidArgument naming the node, the variable and both types unless the
// variable holds `dtype` (a handle carries no type, so a ResourceApply* of
// T=double on a float variable would otherwise write past its buffer).
absl::StatusOr<Var*> VarInput(OpKernelContext* ctx, int i, DataType dtype);
template <typename T>
absl::StatusOr<Var*> VarInputOf(OpKernelContext* ctx, int i) {
  return VarInput(ctx, i, DataTypeToEnum<T>::value);
}

// Outputs `var` as ref output `i` (and drops any tensor left in that slot,
// which would otherwise keep an old buffer alive); nothing when the op has
// no output i (the ResourceApply* and Assign*VariableOp forms).
void SetRefOutput(OpKernelContext* ctx, int i, Var* var);

// FailedPrecondition "Attempting to use uninitialized value <name>" unless
// `var` is initialized. Call with var->mu held.
absl::Status CheckInitialized(const Var& var);

// AssignAdd / AssignSub (`op`): CheckInitialized, then InvalidArgument naming
// the variable and both shapes unless `value` has the variable's shape. Call
// with var->mu held.
absl::Status CheckAssignUpdate(absl::string_view op, const Var& var, const TensorShape& value);

// InvalidArgument "<op>: <arg> must be a scalar, got shape ..." unless input
// `i` is a scalar. Reads only the shape, so it suits device tensors too.
absl::Status CheckScalarInput(OpKernelContext* ctx, int i);

// InvalidArgument naming var, input `i` and both shapes unless `shape` (of
// input i: a slot or the gradient) equals `var_shape`.
absl::Status CheckSameShape(OpKernelContext* ctx, const Var& var, const TensorShape& var_shape,
                            int i, const TensorShape& shape);

// InvalidArgument when two of `vars` (the ref inputs 0..n-1 of an update) are
// the same variable: the update loops assume their buffers do not overlap.
absl::Status CheckDistinct(OpKernelContext* ctx, absl::Span<Var* const> vars);

// Makes `value` the variable's value, as Assign and AssignVariableOp do:
// takes its buffer when nobody else holds it, else copies it through the
// device (into the variable's own buffer when that is unshared and of the
// value's type and shape, else into a fresh one), so no two variables share
// a buffer (one assigned from another's read would otherwise follow the
// other's in-place updates). `initialized` is the caller's to set.
absl::Status StoreValue(OpKernelContext* ctx, Var* var, const Tensor& value)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(var->mu);

// A copy-on-write update of one variable, with var->mu held throughout:
//   ASSIGN_OR_RETURN(VarUpdate u, VarUpdate::Begin(var, ctx->device()));
//   float* w = u.data<float>();   // holds the current value; update in place
//   ...
//   u.Commit();
// data() is the variable's own buffer when nobody else shares it, else a
// fresh copy that Commit() installs in the variable (readers keep the old
// buffer). Either way no other tensor aliases data(), so loops over it may
// use __restrict pointers. The fresh buffer comes from device->allocator()
// and is filled by device->CopyWithinDevice (ordered like a kernel on a GPU),
// so data() is device memory on a GPU: only CUDA kernels may touch it.
class VarUpdate {
 public:
  // FailedPrecondition when uninitialized; ResourceExhausted when a fresh
  // buffer cannot be had; the device's error when the copy fails.
  static absl::StatusOr<VarUpdate> Begin(Var* var, Device* device);
  // The sparse updates' form (Scatter*, SparseApply*): data() is always the
  // variable's own buffer, shared or not. Copying a table of 2^21 rows to
  // change a few thousand made every update that overlapped a read (a
  // parameter server's gathers for another worker) cost the whole table:
  // asynchronous wide & deep ran 4x slower per 4x rows. A reader holding the
  // buffer meanwhile may see some rows before the update and some after, as
  // with TensorFlow's ref variables. FailedPrecondition when uninitialized.
  static absl::StatusOr<VarUpdate> BeginInPlace(Var* var);

  template <typename T>
  T* data() const {
    return static_cast<T*>(data_);
  }
  const TensorShape& shape() const { return shape_; }
  int64_t size() const { return size_; }
  void Commit();

 private:
  Var* var_ = nullptr;
  Tensor fresh_;  // uninitialized when updating in place
  void* data_ = nullptr;
  TensorShape shape_;
  int64_t size_ = 0;
};

// Runs body(i) for i in [0, n): the bulk in a loop whose trip count is a
// multiple of 8, so that GCC vectorizes it at -O2.
template <typename Body>
inline void ForEachIndex(int64_t n, Body body) {
  const int64_t bulk = n & ~int64_t{7};
  for (int64_t i = 0; i < bulk; ++i) body(i);
  for (int64_t i = bulk; i < n; ++i) body(i);
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_STATE_OPS_H_
