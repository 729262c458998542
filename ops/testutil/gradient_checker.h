// Finite-difference gradient checks for op tests.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output x = ops::Placeholder(s, DT_DOUBLE);
//   Output y = ops::Tanh(s, x);
//   ASSIGN_OR_RETURN(double err,
//       MaxGradientError(s, {x}, {Tensor::FromVector<double>({0.1, -0.4})}, y));
//   EXPECT_LT(err, 1e-6);
//
// xs must be Placeholders (they are fed); y any floating tensor. Compares the
// Jacobian from AddGradients (one backward pass per element of y) with the
// central difference (y(x+d) - y(x-d)) / 2d per element of x, and returns the
// largest absolute difference. Use DT_DOUBLE for tight bounds.
#ifndef SLUICE_OPS_TESTUTIL_GRADIENT_CHECKER_H_
#define SLUICE_OPS_TESTUTIL_GRADIENT_CHECKER_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/scope.h"
#include "runtime/tensor.h"

namespace sluice {

absl::StatusOr<double> MaxGradientError(const Scope& scope, absl::Span<const Output> xs,
                                        absl::Span<const Tensor> x_values, const Output& y,
                                        double delta = 1e-4);

// Runs `fetch` with xs fed: a one-line way to check forward values in tests.
absl::StatusOr<Tensor> EvalWithFeeds(const Scope& scope, absl::Span<const Output> xs,
                                     absl::Span<const Tensor> x_values, const Output& fetch);

}  // namespace sluice

#endif  // SLUICE_OPS_TESTUTIL_GRADIENT_CHECKER_H_
