// Dawson's integral, the Fresnel integrals and the dilogarithm in double
// (the kernels of ops/math/special_integrals.h). Why our own: Boost.Math
// has none of them. Pure functions: thread-safe. Internal to ops/math.
#ifndef SLUICE_OPS_MATH_INTERNAL_SPECIAL_INTEGRALS_H_
#define SLUICE_OPS_MATH_INTERNAL_SPECIAL_INTEGRALS_H_

namespace sluice {
namespace internal {

double Dawson(double x);
// C(x) and S(x) at once.
void Fresnel(double x, double* c, double* s);
// Li2(1 - x) for x >= 0; NaN below and at +inf.
double Spence(double x);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_SPECIAL_INTEGRALS_H_
