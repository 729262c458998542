// GradientAccumulator: the resource behind the Accumulator* ops
// (ops/data_flow/data_flow_ops.h) — sums the dense gradients workers apply
// for the current global step and hands their average to the chief
// (StepAccumulator, step_accumulator.h, says how steps and takes work).
//
//   GradientAccumulator acc("w/grad_accum", DT_FLOAT, TensorShape({2}), timer);
//   RETURN_IF_ERROR(acc.Apply(/*local_step=*/0, grad, allocator));  // 1 of 2
//   acc.Take(2, absl::Seconds(10), [](absl::StatusOr<Tensor> avg) { ... });
//   RETURN_IF_ERROR(acc.Apply(0, grad2, allocator));  // completes the Take:
//                                                      // avg = (grad + grad2) / 2,
//                                                      // global step 0 -> 1
//
// Apply: InvalidArgument (naming the accumulator and both shapes/dtypes) when
// the gradient's dtype differs or its shape does not fit the declared shape
// or this step's earlier ones; ResourceExhausted when the sum cannot be
// allocated. The average is the sum divided by the count, in the dtype
// (DT_FLOAT or DT_DOUBLE).
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "ops/data_flow/internal/step_accumulator.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

// A dense sum: one tensor of the gradients' shape.
class DenseGradientSum {
 public:
  using Partial = Tensor;
  using Result = Tensor;
  static constexpr char kKind[] = "GradientAccumulator";

  DenseGradientSum(DataType dtype, TensorShape shape) : dtype_(dtype), shape_(std::move(shape)) {}

  absl::Status Add(const std::string& accumulator, const Tensor& gradient, Allocator* allocator);
  Tensor Release();
  void Clear() {
    sum_ = Tensor();
    empty_ = true;
  }
  static absl::StatusOr<Tensor> Average(Tensor sum, int count);

 private:
  const DataType dtype_;
  const TensorShape shape_;
  Tensor sum_;  // uninitialized while empty
  bool empty_ = true;
};

using GradientAccumulator = StepAccumulator<DenseGradientSum>;

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_
