#include "ops/gpu/gpu_kernel_util.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/gpu/cuda_status.h"

namespace sluice {

absl::StatusOr<cudaStream_t> BeginLaunch(OpKernelContext* ctx) {
  GpuDevice* gpu = GpuOf(ctx);
  RETURN_IF_ERROR(gpu->Activate());
  return gpu->compute_stream();
}

absl::Status LaunchStatus(OpKernelContext* ctx, cudaError_t result) {
  if (result == cudaSuccess) return absl::OkStatus();
  // A failed call (e.g. cudaMemsetAsync) also leaves its error as the
  // thread's last error: clear it (unless sticky), or the next kernel's
  // launch check on this thread would report it as its own.
  (void)cudaGetLastError();
  return CudaStatus(result, absl::StrCat(ctx->node().op(), " on ", ctx->device()->name()));
}

absl::Status FillZeros(OpKernelContext* ctx, Tensor* t) {
  ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
  return LaunchStatus(ctx, cudaMemsetAsync(t->raw_data(), 0, t->TotalBytes(), stream));
}

}  // namespace sluice
