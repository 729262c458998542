// Summing a broadcasting op's gradient down to one operand's shape, shared
// by the math gradients (math_grad.cc) and the special functions'. When the
// shapes known at graph-building time decide the broadcast dimensions, the
// sum's axes are constants (no Shape/BroadcastGradientArgs nodes);
// otherwise Shape and BroadcastGradientArgs compute them at run time.
//
//   Output gx = internal::ReduceToOperand(s, ops::Mul(s, g[0], partial_x), x, {y});
//
// Thread-safety: as Scope. Internal to ops/.
#ifndef SLUICE_OPS_MATH_INTERNAL_BROADCAST_GRAD_H_
#define SLUICE_OPS_MATH_INTERNAL_BROADCAST_GRAD_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "graph/scope.h"

namespace sluice {
namespace internal {

// An int32 (int64 when a value needs it) vector constant.
Input IntList(const std::vector<int64_t>& values);

// `grad` (of the shape `a` and `others` broadcast to) summed down to the
// shape of `a`. An invalid grad passes through.
Output ReduceToOperand(const Scope& s, const Output& grad, const Output& a,
                       absl::Span<const Output> others);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_MATH_INTERNAL_BROADCAST_GRAD_H_
