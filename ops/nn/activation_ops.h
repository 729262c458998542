// Activations and losses TensorFlow 1.x graphs use besides Relu: Relu6,
// Elu, Selu, LeakyRelu and L2Loss. Definitions (TensorFlow's names, attrs,
// types), CPU kernels for float and double, and wrappers:
//
//   Output h = ops::Elu(s, ops::MatMul(s, x, w));
//   Output l = ops::LeakyRelu(s, z, {.alpha = 0.1f});
//   Output penalty = ops::L2Loss(s, w);   // sum(w^2) / 2, a scalar
//
// Gradients: RegisterActivationGradients (ops/nn/nn_gradients.h), which emit
// TensorFlow's helper ops Relu6Grad, EluGrad, ... (ops/nn/activation_grad_ops.h).
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_NN_ACTIVATION_OPS_H_
#define SLUICE_OPS_NN_ACTIVATION_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterActivationOps(OpRegistry* ops);
void RegisterActivationKernels(KernelRegistry* kernels);

// SELU's constants (Klambauer et al. 2017; TensorFlow's selu kernel).
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

namespace ops {

// min(max(x, 0), 6).
Output Relu6(const Scope& scope, Input features,
             std::source_location loc = std::source_location::current());
// x for x > 0, e^x - 1 otherwise.
Output Elu(const Scope& scope, Input features,
           std::source_location loc = std::source_location::current());
// scale * x for x > 0, scale * alpha * (e^x - 1) otherwise.
Output Selu(const Scope& scope, Input features,
            std::source_location loc = std::source_location::current());
struct LeakyReluAttrs {
  float alpha = 0.2f;
};
// x for x > 0, alpha * x otherwise.
Output LeakyRelu(const Scope& scope, Input features, const LeakyReluAttrs& attrs = {},
                 std::source_location loc = std::source_location::current());
// sum(t^2) / 2.
Output L2Loss(const Scope& scope, Input t,
              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_NN_ACTIVATION_OPS_H_
