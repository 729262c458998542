// The GPU's part of Sum, Mean, Prod, Max, Min, ArgMax and ArgMin (the shells:
// ops/math/reduction_kernels.h; CUDA code: reduction.cu, argmax.cu). Same shapes, semantics and errors as the CPU kernels
// (ops/math/reduction_kernels.cc; shared checks: ops/math/internal/math_kernel_checks.h);
// the axes (reduction_indices, ArgMax's dimension) are HostMemory inputs, read
// on the host to plan the launch.
// Types: float, double, int64, half, bfloat16 (half and bfloat16 accumulate
// in float). int32 is left to the host kernels that serve int32 shape
// arithmetic on GPUs.
#include <cstdint>
#include <vector>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/reduction.cu.h"
#include "ops/gpu/reduction_launch.h"
#include "ops/gpu/reduction_plan.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "ops/math/reduction_kernels.h"

namespace sluice {
namespace {

using internal::GpuReducePlan;
using internal::GpuReduceTypeOf;

// The GPU's part of ReduceOp (ops/math/reduction_kernels.h).
template <typename T, gpu::ReduceOp kOp>
struct GpuReduceImpl {
  static constexpr bool kExpensive = false;  // only enqueues
  static absl::Status Reduce(OpKernelContext* ctx, const Tensor& x,
                             const internal::ReductionGroups& groups, Tensor* out) {
    const GpuReducePlan plan = internal::PlanGpuReduction(groups);
    return internal::EnqueueGpuReduction(ctx, kOp, GpuReduceTypeOf<T>::value, x, plan, out);
  }
};

// The GPU's part of ArgMaxOp (ops/math/reduction_kernels.h), for ArgMax or
// (kMin) ArgMin.
template <typename T, typename Idx, bool kMin>
struct GpuArgMaxImpl {
  static absl::Status ArgMax(OpKernelContext* ctx, const Tensor& x, const internal::ArgMaxPlan& plan,
                             Tensor* out) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    const auto launch = kMin ? gpu::LaunchArgMin : gpu::LaunchArgMax;
    return LaunchStatus(ctx, launch(GpuReduceTypeOf<T>::value, sizeof(Idx) == 8, x.raw_data(),
                                    plan.outer, plan.n, plan.inner, out->raw_data(),
                                    GpuOf(ctx)->multiprocessor_count(), stream));
  }
};

template <gpu::ReduceOp kOp, typename... Ts>
void RegisterReduction(KernelRegistry* kernels, const char* op) {
  (kernels->Register<ReduceOp<GpuReduceImpl<Ts, kOp>>>(GpuKernel(op)
                                               .TypeConstraint("T", DataTypeToEnum<Ts>::value)
                                               .HostMemory("reduction_indices")),
   ...);
}

template <bool kMin, typename... Ts>
void RegisterArgMax(KernelRegistry* kernels) {
  const char* op = kMin ? "ArgMin" : "ArgMax";
  (kernels->Register<ArgMaxOp<GpuArgMaxImpl<Ts, int64_t, kMin>>>(
       GpuKernel(op)
           .TypeConstraint("T", DataTypeToEnum<Ts>::value)
           .TypeConstraint("output_type", DT_INT64)
           .HostMemory("dimension")),
   ...);
  (kernels->Register<ArgMaxOp<GpuArgMaxImpl<Ts, int32_t, kMin>>>(
       GpuKernel(op)
           .TypeConstraint("T", DataTypeToEnum<Ts>::value)
           .TypeConstraint("output_type", DT_INT32)
           .HostMemory("dimension")),
   ...);
}

}  // namespace

void RegisterGpuReductionKernels(KernelRegistry* kernels) {
  using Op = gpu::ReduceOp;
  RegisterReduction<Op::kSum, float, double, int64_t, Half, BFloat16>(kernels, "Sum");
  RegisterReduction<Op::kMean, float, double, int64_t, Half, BFloat16>(kernels, "Mean");
  RegisterReduction<Op::kProd, float, double, int64_t, Half, BFloat16>(kernels, "Prod");
  RegisterReduction<Op::kMax, float, double, int64_t, Half, BFloat16>(kernels, "Max");
  RegisterReduction<Op::kMin, float, double, int64_t, Half, BFloat16>(kernels, "Min");
  RegisterArgMax<false, float, double, int64_t, Half, BFloat16>(kernels);
  RegisterArgMax<true, float, double, int64_t, Half, BFloat16>(kernels);
}

}  // namespace sluice
