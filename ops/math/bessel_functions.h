// The Bessel functions of tf.math.special, under TensorFlow's names, inputs
// and attrs, each (x: T) -> (y: T):
//   BesselI0, BesselI1     modified, first kind: I0(x), I1(x)
//   BesselI0e, BesselI1e   exponentially scaled: e^-|x| I0(x), e^-|x| I1(x)
//   BesselK0, BesselK1     modified, second kind (x > 0)
//   BesselK0e, BesselK1e   exponentially scaled: e^x K0(x), e^x K1(x)
//   BesselJ0, BesselJ1     first kind
//   BesselY0, BesselY1     second kind (x > 0)
// CPU kernels for float and double (computed in double through Boost.Math;
// the scaled forms beyond x = 700 by their asymptotic series, where the
// unscaled ones overflow or underflow), with TensorFlow's values at the
// edges: K and Y at x <= 0 are inf and -inf; I, J and Y at +-inf NaN
// (TensorFlow's), the scaled forms 0.
// Gradients as TensorFlow's: I0' = I1, I1' = I0 - I1/x (1/2 at 0), J0' =
// -J1, J1' = J0 - J1/x (1/2 at 0), K0' = -K1, K1' = -K0 - K1/x, Y0' =
// -Y1, Y1' = Y0 - Y1/x, and the scaled forms' with the scale's derivative.
//
//   Output y = ops::BesselI0e(s, x);
//
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_BESSEL_FUNCTIONS_H_
#define SLUICE_OPS_MATH_BESSEL_FUNCTIONS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBesselFunctionOps(OpRegistry* ops);
void RegisterBesselFunctionKernels(KernelRegistry* kernels);

namespace ops {

Output BesselI0(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselI0e(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselI1(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselI1e(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselK0(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselK0e(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselK1(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselK1e(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselJ0(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselJ1(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselY0(const Scope& scope, Input x, std::source_location loc = std::source_location::current());
Output BesselY1(const Scope& scope, Input x, std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_BESSEL_FUNCTIONS_H_
