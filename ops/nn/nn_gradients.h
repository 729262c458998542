// Gradient functions of the nn ops (nn_ops.h, activation_ops.h, batch_norm_ops.h, lrn_ops.h,
// rnn_block_ops.h, nn3d_ops.h, depthwise_conv_ops.h), registered into an OpRegistry that already
// holds their definitions. RegisterNnFamilyGradients (ops/nn/nn_family.h) calls them all; a test
// may call one on a private registry.
//
//   RETURN_IF_ERROR(RegisterNnGradients(&ops));
//
// Each gradient builds its nodes with the typed wrappers, in the scope it is
// given (AddGradients names it "gradients/<node>_grad"). NotFound when an op
// they differentiate is not registered yet.
//
// Registration is thread-compatible (call during start-up); the registered
// functions only build nodes in the scope they are given.
#ifndef SLUICE_OPS_NN_NN_GRADIENTS_H_
#define SLUICE_OPS_NN_NN_GRADIENTS_H_

#include "absl/status/status.h"
#include "graph/op_registry.h"

namespace sluice {

absl::Status RegisterNnGradients(OpRegistry* ops);
absl::Status RegisterActivationGradients(OpRegistry* ops);
absl::Status RegisterBatchNormGradients(OpRegistry* ops);
absl::Status RegisterLrnGradients(OpRegistry* ops);
absl::Status RegisterRnnBlockGradients(OpRegistry* ops);
absl::Status RegisterNn3dGradients(OpRegistry* ops);
absl::Status RegisterDepthwiseConvGradients(OpRegistry* ops);

}  // namespace sluice

#endif  // SLUICE_OPS_NN_NN_GRADIENTS_H_
