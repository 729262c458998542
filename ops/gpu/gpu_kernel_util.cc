#include "ops/gpu/gpu_kernel_util.h"

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "runtime/gpu/cuda_status.h"

namespace sluice {

absl::StatusOr<cudaStream_t> BeginLaunch(OpKernelContext* ctx) {
  GpuDevice* gpu = GpuOf(ctx);
  RETURN_IF_ERROR(gpu->Activate());
  return gpu->compute_stream();
}

absl::Status LaunchStatus(OpKernelContext* ctx, cudaError_t result) {
  if (result == cudaSuccess) return absl::OkStatus();
  return CudaStatus(result, absl::StrCat(ctx->node().op(), " on ", ctx->device()->name()));
}

}  // namespace sluice
