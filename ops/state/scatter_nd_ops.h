// N-d scatter updates of variables (tf.compat.v1.scatter_nd_update / add /
// sub / max / min, and tf.Variable.scatter_nd_*): ScatterNdUpdate,
// ScatterNdAdd, ScatterNdSub, ScatterNdMax, ScatterNdMin on ref variables
// (VariableV2; output the variable) and their Resource forms on resource
// handles (no output), with TensorFlow's names, inputs and attrs; CPU
// kernels for float, double, int32 and int64 values, int32 or int64
// indices.
//
// indices [..., depth] name slices of the variable's first `depth`
// dimensions; updates is indices.shape[:-1] + var.shape[depth:]; each index
// row's slice is replaced (the last write wins), added to, subtracted
// from, or compared with its update row.
//
//   ops::VariableAndInit v = ops::VariableWithInit(s.WithOpName("v"), zeros_4x2);
//   Output out = ops::ScatterNdAdd(s, v.var, indices_2x1, updates_2x2);
//
// Errors (InvalidArgument): an index row out of range ("indices[i] = [..]
// does not index into shape [..]", nothing written) unless
// bad_indices_policy is "IGNORE" (such rows are skipped); updates of the
// wrong shape, naming the shapes; FailedPrecondition for an uninitialized
// variable. Kernels hold the variable's lock for the whole update and
// write in place (ops/state/scatter_ops.h's rules). No gradients, as in
// TensorFlow. Thread-safety: kernels are thread-safe.
#ifndef SLUICE_OPS_STATE_SCATTER_ND_OPS_H_
#define SLUICE_OPS_STATE_SCATTER_ND_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterScatterNdOps(OpRegistry* ops);
void RegisterScatterNdKernels(KernelRegistry* kernels);

namespace ops {

Output ScatterNdUpdate(const Scope& scope, Input ref, Input indices, Input updates,
                       std::source_location loc = std::source_location::current());
Output ScatterNdAdd(const Scope& scope, Input ref, Input indices, Input updates,
                    std::source_location loc = std::source_location::current());
Output ScatterNdSub(const Scope& scope, Input ref, Input indices, Input updates,
                    std::source_location loc = std::source_location::current());
Output ScatterNdMax(const Scope& scope, Input ref, Input indices, Input updates,
                    std::source_location loc = std::source_location::current());
Output ScatterNdMin(const Scope& scope, Input ref, Input indices, Input updates,
                    std::source_location loc = std::source_location::current());

// `resource` is a VarHandleOp handle; the node (run it as a target).
Node* ResourceScatterNdUpdate(const Scope& scope, Input resource, Input indices, Input updates,
                              std::source_location loc = std::source_location::current());
Node* ResourceScatterNdAdd(const Scope& scope, Input resource, Input indices, Input updates,
                           std::source_location loc = std::source_location::current());
Node* ResourceScatterNdSub(const Scope& scope, Input resource, Input indices, Input updates,
                           std::source_location loc = std::source_location::current());
Node* ResourceScatterNdMax(const Scope& scope, Input resource, Input indices, Input updates,
                           std::source_location loc = std::source_location::current());
Node* ResourceScatterNdMin(const Scope& scope, Input resource, Input indices, Input updates,
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_SCATTER_ND_OPS_H_
