// Enqueues a planned reduction (ops/gpu/reduction_plan.h) on the kernel's
// GPU: the bridge between a GpuReducePlan and the CUDA launcher of
// reduction.cu.h, shared by the reduction kernels and BiasAddGrad.
//
//   ASSIGN_OR_RETURN(internal::GpuReducePlan plan,
//                    internal::MakeGpuReducePlan(x.shape(), axes, keep_dims));
//   ... kIdentity: forward x reshaped instead ...
//   ASSIGN_OR_RETURN(Tensor* out, ctx->allocate_output(0, plan.out_shape));
//   RETURN_IF_ERROR(internal::EnqueueGpuReduction(ctx, gpu::ReduceOp::kSum,
//                                                 gpu::ReduceType::kFloat, x, plan, out));
//
// Only enqueues work on the compute stream. Thread-safe; borrows x and out,
// which the caller keeps as kernel inputs/outputs (the stream orders reuse).
#ifndef SLUICE_OPS_GPU_REDUCTION_LAUNCH_H_
#define SLUICE_OPS_GPU_REDUCTION_LAUNCH_H_

#include <cstdint>

#include "absl/status/status.h"
#include "graph/types.h"
#include "ops/gpu/reduction.cu.h"
#include "ops/gpu/reduction_plan.h"
#include "runtime/kernel.h"

namespace sluice {
namespace internal {

// The launcher's element type of T (float, double, int64_t, Half, BFloat16).
template <typename T>
struct GpuReduceTypeOf;
template <>
struct GpuReduceTypeOf<float> {
  static constexpr gpu::ReduceType value = gpu::ReduceType::kFloat;
};
template <>
struct GpuReduceTypeOf<double> {
  static constexpr gpu::ReduceType value = gpu::ReduceType::kDouble;
};
template <>
struct GpuReduceTypeOf<int64_t> {
  static constexpr gpu::ReduceType value = gpu::ReduceType::kInt64;
};
template <>
struct GpuReduceTypeOf<Half> {
  static constexpr gpu::ReduceType value = gpu::ReduceType::kHalf;
};
template <>
struct GpuReduceTypeOf<BFloat16> {
  static constexpr gpu::ReduceType value = gpu::ReduceType::kBFloat16;
};

// out (allocated with plan.out_shape, device memory) = the reduction of x
// that `plan` describes. plan.kind must not be kIdentity (the caller
// forwards x). Unimplemented when the plan alternates kept and reduced
// dimensions more than gpu::kMaxReduceGroups times; Internal (CUDA error)
// when the launch fails; ResourceExhausted when scratch cannot be had.
absl::Status EnqueueGpuReduction(OpKernelContext* ctx, gpu::ReduceOp op, gpu::ReduceType type,
                                 const Tensor& x, const GpuReducePlan& plan, Tensor* out);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_REDUCTION_LAUNCH_H_
