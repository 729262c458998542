// The regularized lower incomplete gamma function P(a, x) and its
// derivatives, as TensorFlow's Igamma, IgammaGradA and RandomGammaGrad
// define them (Eigen's igamma family): P by its power series where x <= 1
// or x <= a, else as 1 - Q with Q by its continued fraction (the classic
// Cephes recurrences), both carried with their derivative in a
// (forward-mode dual numbers), so
//
//   internal::Igamma(a, x)                 P(a, x)
//   internal::Igammac(a, x)                Q(a, x) = 1 - P(a, x)
//   internal::IgammaDerA(a, x)             d P(a, x) / d a
//   internal::GammaSampleDerAlpha(a, x)    d x / d a at fixed P(a, x): the
//       implicit reparameterization gradient of a Gamma(a, 1) sample x,
//       -(dP/da) / (dP/dx)
//
// TensorFlow's edge values: x == 0 gives 0 (P and the derivatives; Q 1);
// x < 0, a <= 0 or NaN gives NaN; a == inf gives P 0 (Q 1, derivatives
// 0); x == inf gives P 1 (Q 0, derivatives -0). Computed in double.
// Pure functions: thread-safe. Internal to ops/.
#ifndef SLUICE_OPS_MATH_INTERNAL_INCOMPLETE_GAMMA_H_
#define SLUICE_OPS_MATH_INTERNAL_INCOMPLETE_GAMMA_H_

namespace sluice {
namespace internal {

double Igamma(double a, double x);
double Igammac(double a, double x);
double IgammaDerA(double a, double x);
double GammaSampleDerAlpha(double a, double x);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_INCOMPLETE_GAMMA_H_
