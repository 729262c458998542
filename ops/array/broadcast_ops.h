// Array ops TensorFlow 2 programs use to move elements by shape, with
// TensorFlow's names, attrs and gradients: BroadcastTo, EnsureShape,
// MatrixBandPart (a causal attention mask is its lower band) and Roll.
// CPU kernels for every fixed-size dtype (bytes moved, not computed).
//
//   Output b = ops::BroadcastTo(s, bias, {batch, 8});        // [8] -> [batch, 8]
//   Output m = ops::MatrixBandPart(s, ones, -1, 0);          // lower triangle
//   Output r = ops::Roll(s, x, {1}, {0});                    // last row first
//   Output e = ops::EnsureShape(s, x, TensorShape({-1, 3}));  // checked when run
//
// BroadcastTo: each input dimension (aligned right) is 1 or the target's;
// its gradient sums the broadcast dimensions away. MatrixBandPart keeps
// element (i, j) of each innermost matrix where num_lower < 0 or i - j <=
// num_lower, and num_upper < 0 or j - i <= num_upper; zeros elsewhere; its
// gradient is the same band of the gradient. Roll shifts elements along
// each axis (a shift wraps around; an axis named twice adds its shifts);
// its gradient rolls back. EnsureShape passes its input on when its shape
// is compatible with `shape` (unknown dimensions match anything).
//
// Errors: InvalidArgument naming the op: a target shape the input does not
// broadcast to (or of lower rank), a band of a tensor below rank 2, shift
// and axis of different lengths or an axis out of range, and EnsureShape's
// shape mismatch (both shapes named). Thread-safety: stateless kernels.
#ifndef SLUICE_OPS_ARRAY_BROADCAST_OPS_H_
#define SLUICE_OPS_ARRAY_BROADCAST_OPS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "graph/tensor_shape.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterBroadcastOps(OpRegistry* ops);
absl::Status RegisterBroadcastGradients(OpRegistry* ops);
void RegisterBroadcastKernels(KernelRegistry* kernels);

namespace ops {

Output BroadcastTo(const Scope& scope, Input input, Input shape,
                   std::source_location loc = std::source_location::current());
Output EnsureShape(const Scope& scope, Input input, const TensorShape& shape,
                   std::source_location loc = std::source_location::current());
Output MatrixBandPart(const Scope& scope, Input input, Input num_lower, Input num_upper,
                      std::source_location loc = std::source_location::current());
Output Roll(const Scope& scope, Input input, Input shift, Input axis,
            std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_ARRAY_BROADCAST_OPS_H_
