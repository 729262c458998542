// GPU kernels of Sum, Mean, Prod, Max, Min and ArgMax (CUDA code:
// reduction.cu). Same shapes, semantics and errors as the CPU kernels
// (ops/reduction_kernels.cc; shared checks: ops/internal/math_kernel_checks.h);
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
#include "ops/internal/math_kernel_checks.h"

namespace sluice {
namespace {

using internal::GpuReducePlan;
using internal::GpuReduceTypeOf;

template <typename T, gpu::ReduceOp kOp>
class ReduceGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(keep_dims_, ctx.GetAttr<bool>("keep_dims"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, internal::ReadReductionAxes(ctx->input(1)));
    ASSIGN_OR_RETURN(GpuReducePlan plan, internal::MakeGpuReducePlan(x.shape(), axes, keep_dims_));
    if (plan.kind == GpuReducePlan::Kind::kIdentity) {
      // Only size-1 dimensions are reduced: the output is the input reshaped.
      ASSIGN_OR_RETURN(Tensor same, x.Reshaped(plan.out_shape));
      ctx->set_output(0, std::move(same));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    return internal::EnqueueGpuReduction(ctx, kOp, GpuReduceTypeOf<T>::value, x, plan, out);
  }
  bool IsExpensive() const override { return false; }  // only enqueues

 private:
  bool keep_dims_ = false;
};

template <typename T, typename Idx>
class ArgMaxGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(internal::ArgMaxPlan plan, internal::PlanArgMax(x, ctx->input(1)));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx,
                        gpu::LaunchArgMax(GpuReduceTypeOf<T>::value, sizeof(Idx) == 8, x.raw_data(),
                                          plan.outer, plan.n, plan.inner, out->raw_data(),
                                          GpuOf(ctx)->multiprocessor_count(), stream));
  }
  bool IsExpensive() const override { return false; }
};

template <gpu::ReduceOp kOp, typename... Ts>
void RegisterReduction(KernelRegistry* kernels, const char* op) {
  (kernels->Register<ReduceGpuOp<Ts, kOp>>(GpuKernel(op)
                                               .TypeConstraint("T", DataTypeToEnum<Ts>::value)
                                               .HostMemory("reduction_indices")),
   ...);
}

template <typename... Ts>
void RegisterArgMax(KernelRegistry* kernels) {
  (kernels->Register<ArgMaxGpuOp<Ts, int64_t>>(GpuKernel("ArgMax")
                                                   .TypeConstraint("T", DataTypeToEnum<Ts>::value)
                                                   .TypeConstraint("output_type", DT_INT64)
                                                   .HostMemory("dimension")),
   ...);
  (kernels->Register<ArgMaxGpuOp<Ts, int32_t>>(GpuKernel("ArgMax")
                                                   .TypeConstraint("T", DataTypeToEnum<Ts>::value)
                                                   .TypeConstraint("output_type", DT_INT32)
                                                   .HostMemory("dimension")),
   ...);
}

}  // namespace

void RegisterGpuReductionKernels(KernelRegistry* kernels) {
  using gpu::ReduceOp;
  RegisterReduction<ReduceOp::kSum, float, double, int64_t, Half, BFloat16>(kernels, "Sum");
  RegisterReduction<ReduceOp::kMean, float, double, int64_t, Half, BFloat16>(kernels, "Mean");
  RegisterReduction<ReduceOp::kProd, float, double, int64_t, Half, BFloat16>(kernels, "Prod");
  RegisterReduction<ReduceOp::kMax, float, double, int64_t, Half, BFloat16>(kernels, "Max");
  RegisterReduction<ReduceOp::kMin, float, double, int64_t, Half, BFloat16>(kernels, "Min");
  RegisterArgMax<float, double, int64_t, Half, BFloat16>(kernels);
}

}  // namespace sluice
