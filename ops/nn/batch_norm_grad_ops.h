// The backward ops of TensorFlow's fused batch normalization, as
// TensorFlow-differentiated graph files hold them: FusedBatchNormGrad,
// FusedBatchNormGradV2 and FusedBatchNormGradV3 (names, inputs, attrs of
// tensorflow/core/ops/nn_ops.cc). Definitions, CPU kernels (float, NHWC)
// and a wrapper:
//
//   ops::FusedBatchNormGradOutputs g = ops::FusedBatchNormGradV3(
//       s, dy, x, scale, bn.reserve_space_1, bn.reserve_space_2, bn_reserve_space_3);
//   // g.x_backprop, g.scale_backprop, g.offset_backprop
//
// reserve_space_1 and _2 are the mean and (biased) variance the forward op
// normalized by: its reserve_space outputs when is_training, the population
// mean and variance inputs otherwise. With r = 1 / sqrt(var + epsilon),
// xhat = (x - mean) * r and means over N, H, W:
//   training:  x_backprop = scale * r * (dy - mean(dy) - xhat * mean(dy * xhat))
//   inference: x_backprop = scale * r * dy
//   scale_backprop = sum(dy * xhat), offset_backprop = sum(dy).
// The last two outputs are empty ([0]). Sluice's own gradient of
// FusedBatchNorm* (ops/nn/batch_norm_grad.cc) computes the same with math ops,
// so that it can be differentiated again. NCHW is Unimplemented; bad shapes
// are InvalidArgument naming the op and the input.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_BATCH_NORM_GRAD_OPS_H_
#define SLUICE_OPS_NN_BATCH_NORM_GRAD_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBatchNormGradOps(OpRegistry* ops);
void RegisterBatchNormGradKernels(KernelRegistry* kernels);

namespace ops {

struct FusedBatchNormGradAttrs {
  float epsilon = 0.0001f;
  std::string data_format = "NHWC";
  bool is_training = true;
};
struct FusedBatchNormGradOutputs {
  Output x_backprop, scale_backprop, offset_backprop;
};
FusedBatchNormGradOutputs FusedBatchNormGradV3(
    const Scope& scope, Input y_backprop, Input x, Input scale, Input reserve_space_1,
    Input reserve_space_2, Input reserve_space_3, const FusedBatchNormGradAttrs& attrs = {},
    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_BATCH_NORM_GRAD_OPS_H_
