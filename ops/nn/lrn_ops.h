// Local response normalization, as tf.nn.local_response_normalization
// writes it: LRN and its gradient op LRNGrad (names, inputs, attrs and
// defaults of tensorflow/core/ops/nn_ops.cc). Definitions, CPU kernels
// (float, as TensorFlow registers on the CPU) and wrappers:
//
//   Output y = ops::LRN(s, x, {.depth_radius = 2, .bias = 1, .alpha = 1e-4f, .beta = 0.75f});
//
// Over the last dimension of a 4-D input, with
// norm[d] = bias + alpha * sum(x[d - r .. d + r]^2) (the window clipped to
// the depth): y[d] = x[d] / norm[d]^beta. LRNGrad(dy, x, y) is
// dx[j] = sum over d whose window holds j of
//   dy[d] * (norm[d]^-beta * [j == d] - 2 alpha beta x[d] x[j] norm[d]^(-beta - 1)).
// The gradient of LRN (RegisterLrnGradients, ops/nn/nn_gradients.h) emits LRNGrad.
//
// Errors: a non-4-D input, or inputs of different shapes, are
// InvalidArgument naming the op. Thread-safety: as Scope; kernels are
// stateless. Ownership: nodes belong to the scope's graph.
#ifndef SLUICE_OPS_NN_LRN_OPS_H_
#define SLUICE_OPS_NN_LRN_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterLrnOps(OpRegistry* ops);
void RegisterLrnKernels(KernelRegistry* kernels);

namespace ops {

struct LRNAttrs {
  int64_t depth_radius = 5;
  float bias = 1.0f;
  float alpha = 1.0f;
  float beta = 0.5f;
};
Output LRN(const Scope& scope, Input input, const LRNAttrs& attrs = {},
           std::source_location loc = std::source_location::current());
Output LRNGrad(const Scope& scope, Input input_grads, Input input_image, Input output_image,
               const LRNAttrs& attrs = {},
               std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_LRN_OPS_H_
