// Multi-tensor updates: the (Resource)ApplyGradientDescent or ApplyAdam nodes of a
// step that share a device and their hyper-parameters, as one node, so that
// a GPU step launches one update kernel per 32 variables instead of one per
// variable (placement/group_updates.h makes these nodes; they are internal,
// like TensorFlow's fused ops):
//
//   _MultiApplyGradientDescent(var: N * Ref(T), alpha: T, delta: N * T)
//       -> out: N * Ref(T)                       var[i] -= alpha * delta[i]
//   _MultiApplyAdam(var, m, v: N * Ref(T), beta1_power, beta2_power, lr,
//                   beta1, beta2, epsilon: T, grad: N * T; use_nesterov)
//       -> out: N * Ref(T)                       ApplyAdam on every i
//
// and their resource forms, for the ResourceApplyX nodes of resource
// variables (handles in place of the refs, no outputs):
//
//   _MultiResourceApplyGradientDescent(var: N * resource, alpha, delta: N * T)
//   _MultiResourceApplyAdam(var, m, v: N * resource, ..., grad: N * T)
//
// Each does exactly what its ApplyX does for every i (the same formulas and
// copy-on-write variable updates, ops/training/training_kernels.h), with
// every variable locked at once; InvalidArgument for a variable given twice
// or a shape that differs from its variable's.
#ifndef SLUICE_OPS_TRAINING_MULTI_APPLY_OPS_H_
#define SLUICE_OPS_TRAINING_MULTI_APPLY_OPS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterMultiApplyOps(OpRegistry* ops);

// The CPU kernels (float, double).
void RegisterMultiApplyKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_MULTI_APPLY_OPS_H_
