// GPU arithmetic of the training ops (ApplyGradientDescent, ApplyMomentum,
// ApplyAdam, their ResourceApply* forms, ResourceApplyKerasMomentum) and of
// AssignAdd / AssignSub (and AssignAdd/SubVariableOp): the shells of
// ops/training/training_kernels.h and ops/state/state_kernels.h check, lock
// and copy on write (the copy runs on the compute stream), then one fused
// CUDA kernel does the update (ops/gpu/training.cu; the momentums: the row
// kernel of ops/gpu/sparse_training.cu). Scalars stay in device memory: the
// host checks only their shapes, the kernel reads the values.
#include <cstdint>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/sparse_training.cu.h"
#include "ops/gpu/training.cu.h"
#include "ops/state/state_kernels.h"
#include "ops/training/training_kernels.h"

namespace sluice {
namespace {

template <typename T>
const T* DeviceScalar(const Tensor& t) {
  return t.data<T>();
}

struct GpuTrainingImpl {
  template <typename T>
  static absl::Status GradientDescent(OpKernelContext* ctx, T* var, const Tensor& alpha,
                                      const T* delta, int64_t n) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchApplyGradientDescent<T>(var, DeviceScalar<T>(alpha),
                                                                delta, n, stream));
  }

  // The two momentums run on the row kernel over the whole variable (the
  // dense form of ops/gpu/sparse_training.cu.h's rules).
  template <typename T>
  static absl::Status Momentum(OpKernelContext* ctx, T* var, T* accum, const Tensor& lr,
                               const T* grad, const Tensor& momentum, int64_t n, bool nesterov) {
    return MomentumRow(ctx, gpu::RowRule::kMomentum, var, accum, lr, grad, momentum, n, nesterov);
  }

  template <typename T>
  static absl::Status KerasMomentum(OpKernelContext* ctx, T* var, T* accum, const Tensor& lr,
                                    const T* grad, const Tensor& momentum, int64_t n,
                                    bool nesterov) {
    return MomentumRow(ctx, gpu::RowRule::kKerasMomentum, var, accum, lr, grad, momentum, n,
                       nesterov);
  }

  template <typename T>
  static absl::Status Adam(OpKernelContext* ctx, T* var, T* m, T* v, const AdamScalarInputs& s,
                           const T* grad, int64_t n, bool nesterov) {
    gpu::AdamScalars<T> scalars;
    scalars.beta1_power = DeviceScalar<T>(*s.beta1_power);
    scalars.beta2_power = DeviceScalar<T>(*s.beta2_power);
    scalars.lr = DeviceScalar<T>(*s.lr);
    scalars.beta1 = DeviceScalar<T>(*s.beta1);
    scalars.beta2 = DeviceScalar<T>(*s.beta2);
    scalars.epsilon = DeviceScalar<T>(*s.epsilon);
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(
        ctx, gpu::LaunchApplyAdam<T>(var, m, v, scalars, grad, n, nesterov, stream));
  }

  template <typename T>
  static absl::Status AssignUpdate(OpKernelContext* ctx, T* var, const T* value, int64_t n,
                                   bool add) {
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    return LaunchStatus(ctx, gpu::LaunchAssignUpdate<T>(var, value, n, add, stream));
  }

 private:
  template <typename T>
  static absl::Status MomentumRow(OpKernelContext* ctx, gpu::RowRule rule, T* var, T* accum,
                                  const Tensor& lr, const T* grad, const Tensor& momentum,
                                  int64_t n, bool nesterov) {
    gpu::RowUpdate<T> u;
    u.rule = rule;
    u.var = var;
    u.slot[0] = accum;
    u.hyper[0] = DeviceScalar<T>(lr);
    u.hyper[1] = DeviceScalar<T>(momentum);
    u.flag = nesterov;
    u.grad = grad;
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    // One row of n elements: the kernel's flat index is the element's.
    return LaunchStatus(ctx, gpu::LaunchRowUpdate<T, int64_t>(u, /*rows=*/1, /*inner=*/n,
                                                              /*indices=*/nullptr, 1, stream));
  }
};

}  // namespace

void RegisterGpuTrainingKernels(KernelRegistry* kernels) {
  // The ResourceApply* forms too: a resource variable on a GPU (a TF graph
  // written with use_resource, a Keras layer) is updated where it lives.
  RegisterTrainingKernelsFor<GpuTrainingImpl, float>(kernels, kDeviceTypeGpu,
                                                     /*with_resource_forms=*/true);
  RegisterTrainingKernelsFor<GpuTrainingImpl, double>(kernels, kDeviceTypeGpu,
                                                      /*with_resource_forms=*/true);
  // Keras's SGD with momentum (the CPU's kernel is a Rule:
  // ops/training/training_kernels_keras.cc).
  RegisterKerasMomentumKernelFor<GpuTrainingImpl, float>(kernels, kDeviceTypeGpu);
  RegisterKerasMomentumKernelFor<GpuTrainingImpl, double>(kernels, kDeviceTypeGpu);
  // int64 too: the global step lives beside the model's variables on a GPU.
  RegisterAssignUpdateFor<GpuTrainingImpl, float>(kernels, kDeviceTypeGpu);
  RegisterAssignUpdateFor<GpuTrainingImpl, double>(kernels, kDeviceTypeGpu);
  RegisterAssignUpdateFor<GpuTrainingImpl, int64_t>(kernels, kDeviceTypeGpu);
  RegisterResourceAssignUpdateFor<GpuTrainingImpl, float>(kernels, kDeviceTypeGpu);
  RegisterResourceAssignUpdateFor<GpuTrainingImpl, double>(kernels, kDeviceTypeGpu);
  RegisterResourceAssignUpdateFor<GpuTrainingImpl, int64_t>(kernels, kDeviceTypeGpu);
}

}  // namespace sluice
