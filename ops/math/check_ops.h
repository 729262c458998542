// Run-time checks TensorFlow graphs carry: Assert (tf.Assert, tf.debugging
// asserts) and CheckNumerics (tf.debugging.check_numerics,
// tf.add_check_numerics_ops). Definitions, CPU kernels and wrappers:
//
//   Node* ok = ops::Assert(s, ops::Less(s, x, 10.0f), {Input("x too big:"), x});
//   Output checked = ops::CheckNumerics(s, logits, "logits");
//
// A failed Assert fails the step with InvalidArgument "assertion failed: "
// and its data, each printed as "[v0 v1 ...]" (at most `summarize`
// elements). CheckNumerics passes its input through, or fails with
// "<message> : Tensor had NaN values" (Inf, or Inf and NaN);
// CheckNumericsV2 (tf.debugging.enable_check_numerics) says which infinity
// ("-Inf and +Inf and NaN"). Their gradients check the gradient the same
// way (RegisterCheckGradients).
// Thread-safety: as Scope; the kernels are stateless.
#ifndef SLUICE_OPS_MATH_CHECK_OPS_H_
#define SLUICE_OPS_MATH_CHECK_OPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterCheckOps(OpRegistry* ops);
void RegisterCheckKernels(KernelRegistry* kernels);

namespace ops {

Node* Assert(const Scope& scope, Input condition, absl::Span<const Input> data,
             int64_t summarize = 3, std::source_location loc = std::source_location::current());
Output CheckNumerics(const Scope& scope, Input tensor, const std::string& message,
                     std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_CHECK_OPS_H_
