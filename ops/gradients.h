// Gradient functions of the built-in ops, registered into an OpRegistry that
// already holds their definitions.
//
//   RETURN_IF_ERROR(RegisterArrayGradients(&ops));
//
// Each gradient builds its nodes with the typed wrappers, in the scope it is
// given (AddGradients names it "gradients/<node>_grad").
//
// Registration is thread-compatible (call during start-up); the registered
// functions only build nodes in the scope they are given.
#ifndef SLUICE_OPS_GRADIENTS_H_
#define SLUICE_OPS_GRADIENTS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterArrayGradients(OpRegistry* ops);
absl::Status RegisterMathGradients(OpRegistry* ops);
absl::Status RegisterNnGradients(OpRegistry* ops);
absl::Status RegisterControlFlowGradients(OpRegistry* ops);
absl::Status RegisterTensorArrayGradients(OpRegistry* ops);
absl::Status RegisterActivationGradients(OpRegistry* ops);
absl::Status RegisterArrayLayoutGradients(OpRegistry* ops);
absl::Status RegisterIndexGradients(OpRegistry* ops);
absl::Status RegisterArrayRearrangeGradients(OpRegistry* ops);
absl::Status RegisterScanAndCheckGradients(OpRegistry* ops);
absl::Status RegisterBatchNormGradients(OpRegistry* ops);
absl::Status RegisterBatchMatMulGradients(OpRegistry* ops);
absl::Status RegisterLrnGradients(OpRegistry* ops);
absl::Status RegisterRnnBlockGradients(OpRegistry* ops);
absl::Status RegisterNn3dGradients(OpRegistry* ops);
absl::Status RegisterDepthwiseConvGradients(OpRegistry* ops);

}  // namespace sluice

#endif  // SLUICE_OPS_GRADIENTS_H_
