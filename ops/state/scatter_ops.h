// Scatter ops: sparse row updates of variables — ScatterUpdate, ScatterAdd,
// ScatterSub, ScatterMul, ScatterDiv, ScatterMin, ScatterMax on ref variables
// (VariableV2) and their Resource forms on resource handles (VarHandleOp),
// with TensorFlow's names, inputs and attrs, and CPU kernels for float,
// double, int32 and int64 values with int32 or int64 indices.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), {1.f, 2.f, 3.f});
//   Output out = ops::ScatterAdd(s, v.var, {0, 2}, {10.f, 20.f});  // v = [11, 2, 23]
//
// For each index position i (indices of any rank, read in row-major order):
//   ScatterUpdate: ref[indices[i], ...] = updates[i, ...]   (the last write wins)
//   ScatterAdd:    ref[indices[i], ...] += updates[i, ...]  (duplicates add up)
//   ScatterSub:    ref[indices[i], ...] -= updates[i, ...]
//   ScatterMul, ScatterDiv: *= and /= (an integer update of 0 is
//                  InvalidArgument, before anything is written)
//   ScatterMin, ScatterMax: the smaller / larger of the two
// updates has shape indices.shape + ref.shape[1:], or is a scalar applied to
// every addressed row. The ref forms output the variable (Ref(T)); the
// resource forms output nothing.
//
// Errors: FailedPrecondition "Attempting to use uninitialized value <name>";
// InvalidArgument "indices[i] = v is not in [0, rows)" for an index out of
// range (nothing is written), and InvalidArgument naming the three shapes when
// updates is shaped wrong. Kernels hold the variable's lock for the whole
// update whatever use_locking says, and write their rows in place even when a
// reader shares the buffer (VarUpdate::BeginInPlace, ops/state/state_ops.h).
// Thread-safety: kernels are thread-safe; graph building is thread-compatible.
// Ownership: the Graph owns built nodes; the ResourceMgr owns variables.
#ifndef SLUICE_OPS_STATE_SCATTER_OPS_H_
#define SLUICE_OPS_STATE_SCATTER_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterScatterOps(OpRegistry* ops);
void RegisterScatterKernels(KernelRegistry* kernels);

namespace internal {

// InvalidArgument naming the three shapes unless `updates` is a scalar or
// indices.shape + var.shape[1:] (and var at least 1-D). Every device's
// scatter kernel checks it (the GPU's in ops/gpu/sparse_training_kernels.cc).
absl::Status CheckScatterUpdatesShape(OpKernelContext* ctx, const TensorShape& var,
                                      const TensorShape& indices, const TensorShape& updates);

}  // namespace internal

namespace ops {

struct ScatterAttrs {
  // ScatterUpdate's default in TensorFlow (ScatterAdd's and ScatterSub's is
  // false); the kernels update in place whatever it says (above).
  bool use_locking = true;
};
Output ScatterUpdate(const Scope& scope, Input ref, Input indices, Input updates,
                     const ScatterAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output ScatterAdd(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output ScatterSub(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output ScatterMul(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output ScatterDiv(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output ScatterMin(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());
Output ScatterMax(const Scope& scope, Input ref, Input indices, Input updates,
                  const ScatterAttrs& attrs = {},
                  std::source_location loc = std::source_location::current());

// The resource forms: `resource` is a VarHandleOp handle.
Node* ResourceScatterUpdate(const Scope& scope, Input resource, Input indices, Input updates,
                            std::source_location loc = std::source_location::current());
Node* ResourceScatterAdd(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());
Node* ResourceScatterSub(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());
Node* ResourceScatterMul(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());
Node* ResourceScatterDiv(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());
Node* ResourceScatterMin(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());
Node* ResourceScatterMax(const Scope& scope, Input resource, Input indices, Input updates,
                         std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_SCATTER_OPS_H_
