// Resource variables, as tf.compat.v1 graphs with use_resource (and Keras
// layers) write them: VarHandleOp, ReadVariableOp, AssignVariableOp,
// AssignAddVariableOp, AssignSubVariableOp, VarIsInitializedOp,
// VariableShape (what TF2's loop gradients ask of a variable) and
// ResourceGather, with CPU and GPU kernels and wrappers. (ResourceApplyGradientDescent,
// ResourceApplyMomentum, ResourceApplyAdam: ops/training/training_ops.h.)
// On a GPU (as in TensorFlow) a handle lives in host memory and the value in
// device memory; the GPU's AssignAdd/SubVariableOp, ResourceGather and
// ResourceApply* are in ops/gpu.
//
//   Output w = ops::VarHandleOp(s.WithOpName("w"), DT_FLOAT, TensorShape({2}));
//   Node* init = ops::AssignVariableOp(s, w, {1.0f, 2.0f});
//   Output value = ops::ReadVariableOp(s, w, DT_FLOAT);
//
// A handle is a DT_RESOURCE scalar naming a variable (container, and the
// shared_name or else the node's name) in its device's ResourceMgr: the
// same store as VariableV2's, so a variable outlives steps. Reads are
// snapshots (updates are copy-on-write, ops/state/state_ops.h). Errors: reading an
// uninitialized variable is FailedPrecondition naming it; a value of another
// dtype is InvalidArgument; a handle of another device is NotFound.
// ReadVariableOp's gradient is the gradient itself (TensorFlow's _ReadGrad).
// Thread-safety: as Scope; kernels lock the variable.
#ifndef SLUICE_OPS_STATE_RESOURCE_VARIABLE_OPS_H_
#define SLUICE_OPS_STATE_RESOURCE_VARIABLE_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterResourceVariableOps(OpRegistry* ops);
// The CPU kernels, and the GPU's (RegisterResourceVariableDeviceKernels).
void RegisterResourceVariableKernels(KernelRegistry* kernels);
// VarHandleOp, VarIsInitializedOp, ReadVariableOp and AssignVariableOp on a
// device with memory of its own, for variables of `types`: handles and the
// flag in host memory, values in the device's memory (a read shares the
// variable's buffer; an assignment takes the value's, or copies it through
// the device when another holds it: internal::StoreValue). Each
// replays right in a recorded step (runtime/step_replay.h tracks the
// device's variables). AssignAdd/SubVariableOp and ResourceGather compute:
// each device registers its own (the shells of ops/state/state_kernels.h and
// internal::ResourceGatherBase below).
void RegisterResourceVariableDeviceKernels(KernelRegistry* kernels, const char* device_type,
                                           const std::vector<DataType>& types);

namespace internal {

// The device-independent half of ResourceGather's kernels: reads the attrs
// (batch_dims must be 0: Unimplemented otherwise), checks the variable (of
// dtype, initialized, not a scalar) and allocates the output
// (indices.shape + value.shape[1:]); a device's Rows() fills it.
class ResourceGatherBase : public VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) final;
  absl::Status Compute(OpKernelContext* ctx) final;

 protected:
  // out[i] = params[indices[i]], rows along axis 0.
  virtual absl::Status Rows(OpKernelContext* ctx, const Tensor& params, const Tensor& indices,
                            Tensor* out) = 0;

 private:
  DataType dtype_ = DT_INVALID;
};

}  // namespace internal

namespace ops {

struct VarHandleAttrs {
  std::string container;
  std::string shared_name;  // "" : the node's name
};
Output VarHandleOp(const Scope& scope, DataType dtype, const TensorShape& shape,
                   const VarHandleAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());
Output ReadVariableOp(const Scope& scope, Input resource, DataType dtype,
                      std::source_location loc = std::source_location::current());
Node* AssignVariableOp(const Scope& scope, Input resource, Input value,
                       std::source_location loc = std::source_location::current());
Node* AssignAddVariableOp(const Scope& scope, Input resource, Input value,
                          std::source_location loc = std::source_location::current());
Node* AssignSubVariableOp(const Scope& scope, Input resource, Input value,
                          std::source_location loc = std::source_location::current());
Output VarIsInitializedOp(const Scope& scope, Input resource,
                          std::source_location loc = std::source_location::current());
// Rows `indices` of the variable's value (axis 0).
Output ResourceGather(const Scope& scope, Input resource, Input indices, DataType dtype,
                      std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_STATE_RESOURCE_VARIABLE_OPS_H_
