// The backward helper ops TensorFlow's gradients of the activations write
// into graph files: Relu6Grad, EluGrad, SeluGrad, LeakyReluGrad,
// SoftplusGrad and SoftsignGrad (tensorflow/core/ops/nn_ops.cc: names,
// inputs, attrs). Definitions, CPU kernels (float, double) and wrappers:
//
//   Output dx = ops::EluGrad(s, dy, ops::Elu(s, x));        // takes Elu's output
//   Output dz = ops::LeakyReluGrad(s, dy, z, {.alpha = 0.1f});  // takes the features
//
// Each is element-wise over two inputs of one shape (anything else is
// InvalidArgument naming the op and both shapes):
//   Relu6Grad(g, x)      g where 0 < x < 6, else 0
//   EluGrad(g, y)        g where y > 0, else g * (y + 1)
//   SeluGrad(g, y)       g * scale where y > 0, else g * (y + scale * alpha)
//   LeakyReluGrad(g, x)  g where x > 0, else g * alpha
//   SoftplusGrad(g, x)   g / (1 + e^-x)
//   SoftsignGrad(g, x)   g / (1 + |x|)^2
// The gradients of Relu6, Elu, Selu, LeakyRelu, Softplus and Softsign emit
// them; their own gradients (second order) are registered too
// (RegisterActivationGradients, ops/nn/nn_gradients.h).
// Thread-safety: as Scope; kernels are stateless. Ownership: nodes belong
// to the scope's graph.
#ifndef SLUICE_OPS_NN_ACTIVATION_GRAD_OPS_H_
#define SLUICE_OPS_NN_ACTIVATION_GRAD_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterActivationGradOps(OpRegistry* ops);
void RegisterActivationGradKernels(KernelRegistry* kernels);

namespace ops {

Output Relu6Grad(const Scope& scope, Input gradients, Input features,
                 std::source_location loc = std::source_location::current());
Output EluGrad(const Scope& scope, Input gradients, Input outputs,
               std::source_location loc = std::source_location::current());
Output SeluGrad(const Scope& scope, Input gradients, Input outputs,
                std::source_location loc = std::source_location::current());
struct LeakyReluGradAttrs {
  float alpha = 0.2f;
};
Output LeakyReluGrad(const Scope& scope, Input gradients, Input features,
                     const LeakyReluGradAttrs& attrs = {},
                     std::source_location loc = std::source_location::current());
Output SoftplusGrad(const Scope& scope, Input gradients, Input features,
                    std::source_location loc = std::source_location::current());
Output SoftsignGrad(const Scope& scope, Input gradients, Input features,
                    std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_ACTIVATION_GRAD_OPS_H_
