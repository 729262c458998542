// The nn family (ops/nn/): convolutions (2-D, 3-D, depthwise), pooling, batch norm,
// LRN, activations, softmax and losses, LSTM/GRU blocks and the fused ops
// the rewrite pass emits.
// One row of the built-in list (ops/op_families.h) names these three
// functions; a new op library in this folder adds its calls here and
// nowhere outside the folder.
//
//   RETURN_IF_ERROR(RegisterNnFamilyOps(&ops));
//   RETURN_IF_ERROR(RegisterNnFamilyGradients(&ops));  // after every family's ops
//   RegisterNnFamilyCpuKernels(&kernels);
//
// Errors: the first registration error (AlreadyExists for a duplicate op,
// NotFound for a gradient of an unregistered op). Thread-compatible: call
// during start-up, on registries the caller owns.
#ifndef SLUICE_OPS_NN_NN_FAMILY_H_
#define SLUICE_OPS_NN_NN_FAMILY_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// Op definitions of every op library in the folder.
absl::Status RegisterNnFamilyOps(OpRegistry* ops);
// Gradient functions; the ops they differentiate must be registered.
absl::Status RegisterNnFamilyGradients(OpRegistry* ops);
// CPU kernels.
void RegisterNnFamilyCpuKernels(KernelRegistry* kernels);

}  // namespace sluice

#endif  // SLUICE_OPS_NN_NN_FAMILY_H_
