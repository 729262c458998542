// The regularized incomplete gamma and beta functions of tf.math, under
// TensorFlow's names, inputs and attrs:
//   Igamma(a, x)           P(a, x), the lower regularized incomplete gamma
//   Igammac(a, x)          Q(a, x) = 1 - P(a, x)
//   IgammaGradA(a, x)      d P(a, x) / d a
//   RandomGammaGrad(alpha, sample)
//                          d sample / d alpha of a Gamma(alpha, 1) draw at
//                          fixed P (RandomGamma's gradient: ops/random)
//   Betainc(a, b, x)       I_x(a, b), the regularized incomplete beta
// CPU kernels for float and double (computed in double: the series and
// continued fraction of ops/math/internal/incomplete_gamma.h; Betainc
// through Boost.Math), with TensorFlow's values at the edges (NaN where a
// parameter is out of its domain). The binary ops broadcast; Betainc takes
// a, b and x of one shape, any of them a scalar.
// Gradients as TensorFlow's: Igamma's w.r.t. a is IgammaGradA, w.r.t. x the
// Gamma(a, 1) density; Igammac's their negations; Betainc's w.r.t. x only,
// x^(a-1) (1-x)^(b-1) / B(a, b). IgammaGradA and RandomGammaGrad have none.
//
//   Output p = ops::Igamma(s, a, x);
//
// Errors: InvalidArgument for shapes that do not broadcast (Betainc:
// differing non-scalar shapes). Thread-safety: as Scope; kernels are
// stateless.
#ifndef SLUICE_OPS_MATH_INCOMPLETE_FUNCTIONS_H_
#define SLUICE_OPS_MATH_INCOMPLETE_FUNCTIONS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterIncompleteFunctionOps(OpRegistry* ops);
void RegisterIncompleteFunctionKernels(KernelRegistry* kernels);

namespace ops {

Output Igamma(const Scope& scope, Input a, Input x,
              std::source_location loc = std::source_location::current());
Output Igammac(const Scope& scope, Input a, Input x,
               std::source_location loc = std::source_location::current());
Output IgammaGradA(const Scope& scope, Input a, Input x,
                   std::source_location loc = std::source_location::current());
Output RandomGammaGrad(const Scope& scope, Input alpha, Input sample,
                       std::source_location loc = std::source_location::current());
Output Betainc(const Scope& scope, Input a, Input b, Input x,
               std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INCOMPLETE_FUNCTIONS_H_
