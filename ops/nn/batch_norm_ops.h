// TensorFlow's fused batch normalization: FusedBatchNorm, FusedBatchNormV2
// and FusedBatchNormV3 (tf.compat.v1.layers.batch_normalization and Keras'
// BatchNormalization write them), training and inference, on NHWC data.
// Definitions, CPU kernels (float) and a wrapper:
//
//   ops::FusedBatchNormOutputs bn = ops::FusedBatchNormV3(s, x, gamma, beta, mean, var,
//                                                          {.is_training = true});
//   // bn.y; bn.batch_mean, bn.batch_variance (Bessel-corrected) for the moving averages
//
// Training normalizes by the batch's mean and (biased) variance over N, H,
// W; inference by the `mean` and `variance` inputs. y = scale * (x - mean)
// / sqrt(variance + epsilon) + offset. With exponential_avg_factor f != 1
// the batch_* outputs are (1 - f) * input + f * batch statistic.
// reserve_space_1/2 are the batch mean and biased variance (the gradient's
// inputs); V3's reserve_space_3 is empty. Gradients: RegisterBatchNormGradients
// (ops/nn/nn_gradients.h), written with math ops. NCHW is Unimplemented.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_BATCH_NORM_OPS_H_
#define SLUICE_OPS_NN_BATCH_NORM_OPS_H_

#include <string>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBatchNormOps(OpRegistry* ops);
void RegisterBatchNormKernels(KernelRegistry* kernels);

namespace ops {

struct FusedBatchNormAttrs {
  float epsilon = 0.0001f;
  float exponential_avg_factor = 1.0f;
  std::string data_format = "NHWC";
  bool is_training = true;
};
struct FusedBatchNormOutputs {
  Output y, batch_mean, batch_variance, reserve_space_1, reserve_space_2;
};
FusedBatchNormOutputs FusedBatchNormV3(const Scope& scope, Input x, Input scale, Input offset,
                                       Input mean, Input variance,
                                       const FusedBatchNormAttrs& attrs = {},
                                       std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_BATCH_NORM_OPS_H_
