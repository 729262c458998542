// Pad and PadV2 on the GPU (CUDA code: pad.cu) for float, double, half,
// bfloat16, int64 and bool, up to 8 dimensions: checked as on the CPU
// (ops/array/internal/array_kernel_checks.h, PlanPad), paddings in host
// memory, PadV2's constant_values read by the kernel from device memory.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/array/internal/array_kernel_checks.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/pad.cu.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {
namespace {

class GpuPadOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    ASSIGN_OR_RETURN(const internal::PadPlan plan,
                     internal::PlanPad(ctx->node().op(), x, ctx->input(1)));
    const void* value = nullptr;
    if (ctx->num_inputs() == 3) {
      RETURN_IF_ERROR(internal::CheckPadValue(ctx->input(2)));
      value = ctx->input(2).raw_data();
    }
    if (x.dims() > gpu::kMaxPadRank) {
      return absl::UnimplementedError(absl::StrCat(ctx->node().op(), ": ", x.dims(),
                                                   " dimensions; the GPU kernel takes at most ",
                                                   gpu::kMaxPadRank));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, plan.out_shape));
    if (out->NumElements() == 0) return absl::OkStatus();
    gpu::PadGeometry g;
    g.rank = x.dims();
    for (int d = 0; d < g.rank; ++d) {
      g.in_dims[d] = x.dim_size(d);
      g.out_dims[d] = plan.out_shape.dim(d);
      g.before[d] = plan.before[d];
    }
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchPad(static_cast<int>(DataTypeSize(x.dtype())),
                                            x.raw_data(), value, out->raw_data(),
                                            out->NumElements(), g, stream));
  }
};

}  // namespace

void RegisterGpuPadKernels(KernelRegistry* kernels) {
  const std::vector<DataType> types = {DT_FLOAT, DT_DOUBLE, DT_HALF, DT_BFLOAT16, DT_INT64,
                                       DT_BOOL};
  kernels->Register<GpuPadOp>(
      GpuKernel("Pad").TypeConstraint("T", types).HostMemory("paddings"));
  kernels->Register<GpuPadOp>(
      GpuKernel("PadV2").TypeConstraint("T", types).HostMemory("paddings"));
}

}  // namespace sluice
