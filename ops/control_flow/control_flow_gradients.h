// Gradient functions of the control-flow ops (control_flow_ops.h,
// stack_ops.h, tensor_array_ops.h, tensor_list_ops.h), registered into an OpRegistry that already holds their definitions.
// RegisterControlFlowFamilyGradients (ops/control_flow/control_flow_family.h) calls them all; a
// test may call one on a private registry.
//
//   RETURN_IF_ERROR(RegisterControlFlowGradients(&ops));
//
// Each gradient builds its nodes with the typed wrappers, in the scope it is
// given (AddGradients names it "gradients/<node>_grad"). NotFound when an op
// they differentiate is not registered yet.
//
// Registration is thread-compatible (call during start-up); the registered
// functions only build nodes in the scope they are given.
#ifndef SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENTS_H_
#define SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENTS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterControlFlowGradients(OpRegistry* ops);
absl::Status RegisterTensorArrayGradients(OpRegistry* ops);
absl::Status RegisterTensorListGradients(OpRegistry* ops);

}  // namespace sluice

#endif  // SLUICE_OPS_CONTROL_FLOW_CONTROL_FLOW_GRADIENTS_H_
