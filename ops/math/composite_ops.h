// Ops TensorFlow has kernels for that Sluice lowers (OpDef::lower_fn) into
// others, so they run on every device and differentiate through what they
// become, as Einsum does:
//   EuclideanNorm        (tf.math.reduce_euclidean_norm) sqrt(sum(x^2)) over
//                        the axes, keep_dims as the Sum; the op is
//                        registered with the reductions (math_ops.cc)
//   CumulativeLogsumexp  (tf.math.cumulative_logsumexp) log of the cumulative
//                        sum of exp(x - m), plus m, with m the maximum along
//                        the axis (held constant for the gradient);
//                        exclusive and reverse as Cumsum's (an exclusive
//                        scan's first element is -inf)
// Values agree with TensorFlow's kernels to rounding; gradients are those of
// the composition (TensorFlow's closed forms give the same values).
//
//   Output norm = ops::EuclideanNorm(s, x, ops::Const(s, 1));
//
// Thread-safety: as Scope.
#ifndef SLUICE_OPS_MATH_COMPOSITE_OPS_H_
#define SLUICE_OPS_MATH_COMPOSITE_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "ops/math/scan_ops.h"

namespace sluice {

// After RegisterMathOps (EuclideanNorm's definition).
absl::Status RegisterCompositeOps(OpRegistry* ops);

namespace ops {

Output EuclideanNorm(const Scope& scope, Input input, Input axis, bool keep_dims = false,
                     std::source_location loc = std::source_location::current());
Output CumulativeLogsumexp(const Scope& scope, Input x, Input axis, const ScanAttrs& attrs = {},
                           std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_COMPOSITE_OPS_H_
