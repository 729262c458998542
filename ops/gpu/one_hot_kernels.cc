// OneHot on the GPU (CUDA code: one_hot.cu) for float, double, half,
// bfloat16, int64 and bool outputs, int32 or int64 indices: checked as on
// the CPU (ops/array/internal/array_kernel_checks.h, PlanOneHot), depth in
// host memory, the indices and the two values read by the kernel.
#include <cstdint>
#include <vector>

#include "base/status_macros.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/one_hot.cu.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

template <typename Index>
class GpuOneHotOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(axis_, ctx.GetAttr<int64_t>("axis"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& indices = ctx->input(0);
    const Tensor& on = ctx->input(2);
    const Tensor& off = ctx->input(3);
    ASSIGN_OR_RETURN(const internal::OneHotPlan p,
                     internal::PlanOneHot(axis_, indices, ctx->input(1), on, off));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, p.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchOneHot<Index>(
                                 static_cast<int>(DataTypeSize(out->dtype())),
                                 indices.data<Index>(), on.raw_data(), off.raw_data(),
                                 out->raw_data(), p.prefix, p.depth, p.suffix, stream));
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

void RegisterGpuOneHotKernels(KernelRegistry* kernels) {
  const std::vector<DataType> types = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64,
                                       DT_BOOL};
  kernels->Register<GpuOneHotOp<int32_t>>(GpuKernel("OneHot")
                                              .TypeConstraint("T", types)
                                              .TypeConstraint("TI", DT_INT32)
                                              .HostMemory("depth"));
  kernels->Register<GpuOneHotOp<int64_t>>(GpuKernel("OneHot")
                                              .TypeConstraint("T", types)
                                              .TypeConstraint("TI", DT_INT64)
                                              .HostMemory("depth"));
}

}  // namespace sluice
