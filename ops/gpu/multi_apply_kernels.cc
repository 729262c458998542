// GPU arithmetic of the multi-tensor updates (ops/training/multi_apply_ops.h):
// the shells of ops/training/multi_apply_kernels.h check, lock and copy on
// write, then one launch per 32 variables (ops/gpu/multi_training.cu).
#include "ops/training/multi_apply_kernels.h"

#include <cstdint>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/multi_training.cu.h"

namespace sluice {
namespace {

struct GpuMultiApplyImpl {
  template <typename T>
  static absl::Status MultiGradientDescent(OpKernelContext* ctx,
                                           absl::Span<const GradientDescentPiece<T>> pieces,
                                           const Tensor& alpha) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    for (size_t start = 0; start < pieces.size(); start += gpu::kMultiPieces) {
      gpu::MultiGradientDescentPieces<T> p;
      for (size_t i = start; i < pieces.size() && p.count < gpu::kMultiPieces; ++i, ++p.count) {
        p.var[p.count] = pieces[i].var;
        p.delta[p.count] = pieces[i].delta;
        p.n[p.count] = pieces[i].n;
      }
      RETURN_IF_ERROR(
          LaunchStatus(ctx, gpu::LaunchMultiApplyGradientDescent<T>(p, alpha.data<T>(), stream)));
    }
    return absl::OkStatus();
  }

  template <typename T>
  static absl::Status MultiAdam(OpKernelContext* ctx, absl::Span<const AdamPiece<T>> pieces,
                                const AdamScalarInputs& s, bool nesterov) {
    gpu::AdamScalars<T> scalars;
    scalars.beta1_power = s.beta1_power->data<T>();
    scalars.beta2_power = s.beta2_power->data<T>();
    scalars.lr = s.lr->data<T>();
    scalars.beta1 = s.beta1->data<T>();
    scalars.beta2 = s.beta2->data<T>();
    scalars.epsilon = s.epsilon->data<T>();
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    for (size_t start = 0; start < pieces.size(); start += gpu::kMultiPieces) {
      gpu::MultiAdamPieces<T> p;
      for (size_t i = start; i < pieces.size() && p.count < gpu::kMultiPieces; ++i, ++p.count) {
        p.var[p.count] = pieces[i].var;
        p.m[p.count] = pieces[i].m;
        p.v[p.count] = pieces[i].v;
        p.grad[p.count] = pieces[i].grad;
        p.n[p.count] = pieces[i].n;
      }
      RETURN_IF_ERROR(
          LaunchStatus(ctx, gpu::LaunchMultiApplyAdam<T>(p, scalars, nesterov, stream)));
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterGpuMultiApplyKernels(KernelRegistry* kernels) {
  RegisterMultiApplyKernelsFor<GpuMultiApplyImpl, float>(kernels, kDeviceTypeGpu);
  RegisterMultiApplyKernelsFor<GpuMultiApplyImpl, double>(kernels, kDeviceTypeGpu);
}

}  // namespace sluice
