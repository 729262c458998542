// Special functions of tf.math, under TensorFlow's names, inputs and attrs:
//   Lgamma      log |Gamma(x)| (inf at the poles 0, -1, -2, ...)
//   Digamma     d/dx log Gamma(x) (NaN at the poles)
//   Polygamma   the a-th derivative of Digamma at x, for a = 0, 1, 2, ...
//               (NaN for other a; +-inf at the poles for a >= 1)
//   Erfinv      the inverse of erf on [-1, 1] (+-inf at +-1, NaN outside)
//   Ndtri       the inverse of the standard normal CDF on [0, 1] (+-inf at
//               the ends, NaN outside)
//   Zeta        Hurwitz's zeta(x, q) = sum_k (q + k)^-x (inf at x = 1 and
//               at q = 0, -1, ...; NaN for x < 1)
//   Expint      the exponential integral Ei(x), x > 0 (-inf at 0, NaN below)
// CPU kernels for float and double through Boost.Math (Debian's
// libboost-dev, header only), with NaN and inf where Boost would throw;
// lgamma is the C library's, Zeta an Euler-Maclaurin sum. Gradients are TensorFlow's: Lgamma's is
// Digamma, Digamma's Polygamma(1, x), Polygamma's w.r.t. x Polygamma(a + 1,
// x) (none w.r.t. a), Erfinv's sqrt(pi)/2 e^(y^2), Ndtri's sqrt(2 pi)
// e^(y^2 / 2), Zeta's w.r.t. q -x Zeta(x + 1, q) (none w.r.t. x),
// Expint's e^x / x.
//
//   Output log_normalizer = ops::Lgamma(s, alpha);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_SPECIAL_FUNCTIONS_H_
#define SLUICE_OPS_MATH_SPECIAL_FUNCTIONS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterSpecialFunctionOps(OpRegistry* ops);
absl::Status RegisterSpecialFunctionGradients(OpRegistry* ops);
void RegisterSpecialFunctionKernels(KernelRegistry* kernels);

namespace ops {

Output Lgamma(const Scope& scope, Input x,
              std::source_location loc = std::source_location::current());
Output Digamma(const Scope& scope, Input x,
               std::source_location loc = std::source_location::current());
Output Polygamma(const Scope& scope, Input a, Input x,
                 std::source_location loc = std::source_location::current());
Output Erfinv(const Scope& scope, Input x,
              std::source_location loc = std::source_location::current());
Output Ndtri(const Scope& scope, Input x,
             std::source_location loc = std::source_location::current());
Output Zeta(const Scope& scope, Input x, Input q,
            std::source_location loc = std::source_location::current());
Output Expint(const Scope& scope, Input x,
              std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_SPECIAL_FUNCTIONS_H_
