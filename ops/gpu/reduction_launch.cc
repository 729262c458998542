#include "ops/gpu/reduction_launch.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"

namespace sluice {
namespace internal {

absl::Status EnqueueGpuReduction(OpKernelContext* ctx, gpu::ReduceOp op, gpu::ReduceType type,
                                 const Tensor& x, const GpuReducePlan& plan, Tensor* out) {
  if (plan.out_count == 0) return absl::OkStatus();
  gpu::ReduceProblem p;
  p.op = op;
  p.type = type;
  switch (plan.kind) {
    case GpuReducePlan::Kind::kIdentity:
      return absl::InternalError(
          absl::StrCat(ctx->node().op(), ": an identity reduction has nothing to launch"));
    case GpuReducePlan::Kind::kEmpty:
      p.outer = plan.out_count;
      p.reduced = 0;
      p.inner = 1;
      break;
    case GpuReducePlan::Kind::kThreeD:
      p.outer = plan.outer;
      p.reduced = plan.reduced;
      p.inner = plan.inner;
      break;
    case GpuReducePlan::Kind::kGeneral:
      if (plan.groups.size() > static_cast<size_t>(gpu::kMaxReduceGroups)) {
        return absl::UnimplementedError(
            absl::StrCat(ctx->node().op(), ": reducing input of shape ", x.shape().DebugString(),
                         " alternates kept and reduced dimensions ", plan.groups.size(),
                         " times; the GPU kernel handles at most ", gpu::kMaxReduceGroups));
      }
      p.num_groups = static_cast<int>(plan.groups.size());
      for (size_t k = 0; k < plan.groups.size(); ++k) p.groups[k] = plan.groups[k];
      p.first_reduced = plan.first_reduced;
      break;
  }
  ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
  const int sm_count = GpuOf(ctx)->multiprocessor_count();
  const int64_t scratch_bytes = gpu::ReduceScratchBytes(p, sm_count);
  // Freed when this returns: later work on the same stream may reuse it.
  Tensor scratch;
  if (scratch_bytes > 0) {
    ASSIGN_OR_RETURN(scratch, ctx->allocate_temp(DT_UINT8, TensorShape({scratch_bytes})));
  }
  return LaunchStatus(ctx, gpu::LaunchReduce(p, x.raw_data(), out->raw_data(), scratch.raw_data(),
                                             sm_count, stream));
}

}  // namespace internal
}  // namespace sluice
