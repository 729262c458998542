// GPU kernels of the training ops (ApplyGradientDescent, ApplyMomentum,
// ApplyAdam) and of AssignAdd / AssignSub: the CPU kernels' locking (every
// updated variable locked in address order for the whole update) and
// copy-on-write (internal::VarUpdate, whose copy runs on the compute stream),
// then one fused CUDA kernel (ops/gpu/training.cu). Scalars stay in device
// memory: the host checks only their shapes, the kernel reads the values.
#include <cstdint>

#include "base/status_macros.h"
#include "ops/gpu/gpu_kernel_util.h"
#include "ops/gpu/gpu_kernels.h"
#include "ops/gpu/training.cu.h"
#include "ops/state_ops.h"

namespace sluice {
namespace {

using internal::CheckDistinct;
using internal::CheckSameShape;
using internal::CheckScalarInput;
using internal::VarLockSet;
using internal::VarUpdate;

// Device pointer to the scalar on input `i`, after checking its shape.
template <typename T>
absl::StatusOr<const T*> DeviceScalar(OpKernelContext* ctx, int i) {
  RETURN_IF_ERROR(CheckScalarInput(ctx, i));
  return ctx->input(i).data<T>();
}

template <typename T>
class ApplyGradientDescentGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(const T* alpha, DeviceScalar<T>(ctx, 1));
    const Tensor& delta = ctx->input(2);
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    VarLockSet lock({var});
    ASSIGN_OR_RETURN(VarUpdate u, VarUpdate::Begin(var, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u.shape(), 2, delta.shape()));
    RETURN_IF_ERROR(LaunchStatus(ctx, gpu::LaunchApplyGradientDescent<T>(
                                          u.data<T>(), alpha, delta.data<T>(), u.size(), stream)));
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
};

template <typename T>
class ApplyMomentumGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(Var * accum, internal::VarInput(ctx, 1));
    ASSIGN_OR_RETURN(const T* lr, DeviceScalar<T>(ctx, 2));
    const Tensor& grad = ctx->input(3);
    ASSIGN_OR_RETURN(const T* momentum, DeviceScalar<T>(ctx, 4));
    RETURN_IF_ERROR(CheckDistinct(ctx, {var, accum}));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    VarLockSet lock({var, accum});
    ASSIGN_OR_RETURN(VarUpdate uv, VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate ua, VarUpdate::Begin(accum, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, uv.shape(), 1, ua.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, uv.shape(), 3, grad.shape()));
    RETURN_IF_ERROR(LaunchStatus(
        ctx, gpu::LaunchApplyMomentum<T>(uv.data<T>(), ua.data<T>(), lr, grad.data<T>(), momentum,
                                         uv.size(), nesterov_, stream)));
    uv.Commit();
    ua.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

template <typename T>
class ApplyAdamGpuOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(Var * m, internal::VarInput(ctx, 1));
    ASSIGN_OR_RETURN(Var * v, internal::VarInput(ctx, 2));
    gpu::AdamScalars<T> s;
    ASSIGN_OR_RETURN(s.beta1_power, DeviceScalar<T>(ctx, 3));
    ASSIGN_OR_RETURN(s.beta2_power, DeviceScalar<T>(ctx, 4));
    ASSIGN_OR_RETURN(s.lr, DeviceScalar<T>(ctx, 5));
    ASSIGN_OR_RETURN(s.beta1, DeviceScalar<T>(ctx, 6));
    ASSIGN_OR_RETURN(s.beta2, DeviceScalar<T>(ctx, 7));
    ASSIGN_OR_RETURN(s.epsilon, DeviceScalar<T>(ctx, 8));
    const Tensor& grad = ctx->input(9);
    RETURN_IF_ERROR(CheckDistinct(ctx, {var, m, v}));
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    VarLockSet lock({var, m, v});
    ASSIGN_OR_RETURN(VarUpdate u_var, VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate u_m, VarUpdate::Begin(m, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate u_v, VarUpdate::Begin(v, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 1, u_m.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 2, u_v.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 9, grad.shape()));
    RETURN_IF_ERROR(LaunchStatus(
        ctx, gpu::LaunchApplyAdam<T>(u_var.data<T>(), u_m.data<T>(), u_v.data<T>(), s,
                                     grad.data<T>(), u_var.size(), nesterov_, stream)));
    u_var.Commit();
    u_m.Commit();
    u_v.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

template <typename T, bool kAdd>
class AssignUpdateGpuOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    const Tensor& value = ctx->input(1);
    ASSIGN_OR_RETURN(cudaStream_t stream, BeginLaunch(ctx));
    absl::MutexLock lock(&var->mu);
    RETURN_IF_ERROR(
        internal::CheckAssignUpdate(kAdd ? "AssignAdd" : "AssignSub", *var, value.shape()));
    ASSIGN_OR_RETURN(VarUpdate u, VarUpdate::Begin(var, ctx->device()));
    RETURN_IF_ERROR(LaunchStatus(ctx, gpu::LaunchAssignUpdate<T>(u.data<T>(), value.data<T>(),
                                                                 u.size(), kAdd, stream)));
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
  bool IsExpensive() const override { return false; }
};

template <typename T>
void RegisterApply(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<ApplyGradientDescentGpuOp<T>>(
      GpuKernel("ApplyGradientDescent").TypeConstraint("T", kType));
  kernels->Register<ApplyMomentumGpuOp<T>>(GpuKernel("ApplyMomentum").TypeConstraint("T", kType));
  kernels->Register<ApplyAdamGpuOp<T>>(GpuKernel("ApplyAdam").TypeConstraint("T", kType));
}

template <typename T>
void RegisterAssignUpdate(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<AssignUpdateGpuOp<T, true>>(GpuKernel("AssignAdd").TypeConstraint("T", kType));
  kernels->Register<AssignUpdateGpuOp<T, false>>(
      GpuKernel("AssignSub").TypeConstraint("T", kType));
}

}  // namespace

void RegisterGpuTrainingKernels(KernelRegistry* kernels) {
  RegisterApply<float>(kernels);
  RegisterApply<double>(kernels);
  // int64 too: the global step lives beside the model's variables on a GPU.
  RegisterAssignUpdate<float>(kernels);
  RegisterAssignUpdate<double>(kernels);
  RegisterAssignUpdate<int64_t>(kernels);
}

}  // namespace sluice
