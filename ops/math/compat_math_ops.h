// Math ops that TensorFlow graphs carry beside the core ones, under
// TensorFlow's names, inputs and attrs:
//   ApproximateEqual(x, y) -> z: bool   |x - y| < tolerance (attr, 1e-5);
//       x and y of one shape
//   Cross(a, b) -> product   the cross product of 3-vectors along the last
//       dimension (tf.linalg.cross), with its gradient
//   NextAfter(x1, x2) -> output   the next representable value after x1
//       toward x2 (tf.math.nextafter; float and double, broadcasting; the
//       gradient passes to x1, as TensorFlow's)
// (tf.math.accumulate_n's AccumulateNV2 is AddN's kin: ops/math/math_ops.h.)
// CPU kernels for float, double, int32, int64.
//
//   Output c = ops::Cross(s, a, b);
//
// Errors (InvalidArgument): shapes that differ, a last dimension not 3.
// Thread-safety: as Scope; kernels are stateless.
#ifndef SLUICE_OPS_MATH_COMPAT_MATH_OPS_H_
#define SLUICE_OPS_MATH_COMPAT_MATH_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterCompatMathOps(OpRegistry* ops);
absl::Status RegisterCompatMathGradients(OpRegistry* ops);
void RegisterCompatMathKernels(KernelRegistry* kernels);

namespace ops {

Output ApproximateEqual(const Scope& scope, Input x, Input y, float tolerance = 1e-5f,
                        std::source_location loc = std::source_location::current());
Output NextAfter(const Scope& scope, Input x1, Input x2,
                 std::source_location loc = std::source_location::current());
Output Cross(const Scope& scope, Input a, Input b,
             std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_COMPAT_MATH_OPS_H_
