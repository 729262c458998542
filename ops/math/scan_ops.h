// Cumulative sums and products along an axis (TensorFlow's Cumsum and
// Cumprod with `exclusive` and `reverse`): definitions, CPU kernels (float,
// double, int32, int64) and wrappers.
//
//   Output c = ops::Cumsum(s, x, 0);                         // [a, a+b, a+b+c]
//   Output e = ops::Cumsum(s, x, 0, {.exclusive = true});     // [0, a, a+b]
//   Output r = ops::Cumprod(s, x, -1, {.reverse = true});     // [abc, bc, c]
//
// Gradients: RegisterScanAndCheckGradients (ops/math/math_gradients.h). Errors: an axis out
// of range, or not a scalar, is InvalidArgument. Thread-safety: as Scope.
#ifndef SLUICE_OPS_MATH_SCAN_OPS_H_
#define SLUICE_OPS_MATH_SCAN_OPS_H_

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterScanOps(OpRegistry* ops);
void RegisterScanKernels(KernelRegistry* kernels);

namespace ops {

struct ScanAttrs {
  bool exclusive = false;  // element i leaves out x[i]
  bool reverse = false;    // from the end of the axis
};
Output Cumsum(const Scope& scope, Input x, Input axis, const ScanAttrs& attrs = {},
              std::source_location loc = std::source_location::current());
Output Cumprod(const Scope& scope, Input x, Input axis, const ScanAttrs& attrs = {},
               std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_SCAN_OPS_H_
