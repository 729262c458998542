// The special integrals of tf.math.special that Boost.Math lacks, under
// TensorFlow's names, inputs and attrs, each (x: T) -> (y: T):
//   Dawsn        Dawson's integral e^(-x^2) * integral_0^x e^(t^2) dt
//   FresnelCos   integral_0^x cos(pi t^2 / 2) dt
//   FresnelSin   integral_0^x sin(pi t^2 / 2) dt
//   Spence       integral_1^x log(t) / (1 - t) dt = Li2(1 - x), x >= 0 (NaN
//                below, and at +inf as TensorFlow)
// Computed in double (internal/special_integrals.h): Dawson by its series
// of positive terms below 6 and its asymptotic series beyond; Fresnel by
// its power series below 2 and the continued fraction of the complex
// error function beyond; Li2 by its series after the reflection and
// Landen transforms. CPU kernels for float and double. Gradients as
// TensorFlow's: Dawsn' = 1 - 2 x y, FresnelCos' = cos(pi x^2 / 2),
// FresnelSin' = sin(pi x^2 / 2), Spence' = log(x) / (1 - x) (-1 at 1).
//
//   Output y = ops::FresnelSin(s, x);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_SPECIAL_INTEGRALS_H_
#define SLUICE_OPS_MATH_SPECIAL_INTEGRALS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSpecialIntegralOps(OpRegistry* ops);
void RegisterSpecialIntegralKernels(KernelRegistry* kernels);

namespace ops {

Output Dawsn(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output FresnelCos(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output FresnelSin(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output Spence(const Scope& scope, Input x, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_SPECIAL_INTEGRALS_H_
