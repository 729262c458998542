// The training ops' kernel shells, written once for every device
// (TensorFlow's `FooOp<Device, T>` + functor pattern). The shell reads the
// attrs, checks the inputs, locks every updated variable in address order for
// the whole update and writes it copy-on-write (internal::VarUpdate); a device
// supplies only the arithmetic, as an `Impl`: CpuTrainingImpl
// (ops/training/training_kernels.cc) and GpuTrainingImpl
// (ops/gpu/training_kernels.cc).
//
//   struct CpuTrainingImpl {
//     template <typename T>
//     static absl::Status GradientDescent(OpKernelContext* ctx, T* var,
//                                         const Tensor& alpha, const T* delta, int64_t n);
//     ... Momentum, Adam (below); KerasMomentum where
//     RegisterKerasMomentumKernelFor is called
//   };
//   RegisterTrainingKernelsFor<CpuTrainingImpl, float>(kernels, kDeviceTypeCpu,
//                                                      /*with_resource_forms=*/true);
//
// The adaptive rules and FTRL, CPU-only, have their own Rule shells
// (ops/training/training_apply_shell.h).
//
// Scalars reach the Impl as checked 0-d tensors in the device's memory: the
// CPU reads them, a GPU hands their addresses to its kernel. The Impl is
// called with the locks held, after every check, with n > 0 or not (it may
// launch nothing for n == 0).
#ifndef SLUICE_OPS_TRAINING_TRAINING_KERNELS_H_
#define SLUICE_OPS_TRAINING_TRAINING_KERNELS_H_

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

// ApplyAdam's scalar inputs (3..8), each a checked 0-d tensor.
struct AdamScalarInputs {
  const Tensor* beta1_power;
  const Tensor* beta2_power;
  const Tensor* lr;
  const Tensor* beta1;
  const Tensor* beta2;
  const Tensor* epsilon;
};

// ApplyGradientDescent(var, alpha, delta): var -= alpha * delta.
template <typename Impl, typename T>
class ApplyGradientDescentOp : public internal::VariableKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    RETURN_IF_ERROR(internal::CheckScalarInput(ctx, 1));
    const Tensor& delta = ctx->input(2);
    internal::VarLockSet lock({var});
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, u.shape(), 2, delta.shape()));
    RETURN_IF_ERROR(
        Impl::template GradientDescent<T>(ctx, u.data<T>(), ctx->input(1), delta.data<T>(),
                                          u.size()));
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }
};

// ApplyMomentum(var, accum, lr, grad, momentum; use_nesterov); with kKeras,
// ResourceApplyKerasMomentum (same inputs; Impl::KerasMomentum).
template <typename Impl, typename T, bool kKeras = false>
class ApplyMomentumOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    ASSIGN_OR_RETURN(Var * accum, internal::VarInputOf<T>(ctx, 1));
    RETURN_IF_ERROR(internal::CheckScalarInput(ctx, 2));
    const Tensor& grad = ctx->input(3);
    RETURN_IF_ERROR(internal::CheckScalarInput(ctx, 4));
    RETURN_IF_ERROR(internal::CheckDistinct(ctx, {var, accum}));
    internal::VarLockSet lock({var, accum});
    ASSIGN_OR_RETURN(internal::VarUpdate uv, internal::VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(internal::VarUpdate ua, internal::VarUpdate::Begin(accum, ctx->device()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, uv.shape(), 1, ua.shape()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, uv.shape(), 3, grad.shape()));
    if constexpr (kKeras) {
      RETURN_IF_ERROR(Impl::template KerasMomentum<T>(ctx, uv.data<T>(), ua.data<T>(),
                                                      ctx->input(2), grad.data<T>(),
                                                      ctx->input(4), uv.size(), nesterov_));
    } else {
      RETURN_IF_ERROR(Impl::template Momentum<T>(ctx, uv.data<T>(), ua.data<T>(), ctx->input(2),
                                                 grad.data<T>(), ctx->input(4), uv.size(),
                                                 nesterov_));
    }
    uv.Commit();
    ua.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

// ApplyAdam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
// grad; use_nesterov).
template <typename Impl, typename T>
class ApplyAdamOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<T>(ctx, 0));
    ASSIGN_OR_RETURN(Var * m, internal::VarInputOf<T>(ctx, 1));
    ASSIGN_OR_RETURN(Var * v, internal::VarInputOf<T>(ctx, 2));
    for (int i = 3; i <= 8; ++i) RETURN_IF_ERROR(internal::CheckScalarInput(ctx, i));
    const AdamScalarInputs s{&ctx->input(3), &ctx->input(4), &ctx->input(5),
                             &ctx->input(6), &ctx->input(7), &ctx->input(8)};
    const Tensor& grad = ctx->input(9);
    RETURN_IF_ERROR(internal::CheckDistinct(ctx, {var, m, v}));
    internal::VarLockSet lock({var, m, v});
    ASSIGN_OR_RETURN(internal::VarUpdate u_var, internal::VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(internal::VarUpdate u_m, internal::VarUpdate::Begin(m, ctx->device()));
    ASSIGN_OR_RETURN(internal::VarUpdate u_v, internal::VarUpdate::Begin(v, ctx->device()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, u_var.shape(), 1, u_m.shape()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, u_var.shape(), 2, u_v.shape()));
    RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, u_var.shape(), 9, grad.shape()));
    RETURN_IF_ERROR(Impl::template Adam<T>(ctx, u_var.data<T>(), u_m.data<T>(), u_v.data<T>(), s,
                                           grad.data<T>(), u_var.size(), nesterov_));
    u_var.Commit();
    u_m.Commit();
    u_v.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool nesterov_ = false;
};

// Registers the three ops for T on `device_type` with `Impl`'s arithmetic;
// with `with_resource_forms`, ResourceApply* too (the same shells:
// internal::VarInput reads a resource handle as well as a ref).
template <typename Impl, typename T>
void RegisterTrainingKernelsFor(KernelRegistry* kernels, const char* device_type,
                                bool with_resource_forms = false) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  auto register_forms = [&](const char* prefix) {
    kernels->Register<ApplyGradientDescentOp<Impl, T>>(
        KernelDef(absl::StrCat(prefix, "ApplyGradientDescent"), device_type)
            .TypeConstraint("T", kType));
    kernels->Register<ApplyMomentumOp<Impl, T>>(
        KernelDef(absl::StrCat(prefix, "ApplyMomentum"), device_type).TypeConstraint("T", kType));
    kernels->Register<ApplyAdamOp<Impl, T>>(
        KernelDef(absl::StrCat(prefix, "ApplyAdam"), device_type).TypeConstraint("T", kType));
  };
  register_forms("");
  if (with_resource_forms) register_forms("Resource");
}

// Registers ResourceApplyKerasMomentum (TensorFlow has no ref form) for T
// on `device_type` with `Impl::KerasMomentum`.
template <typename Impl, typename T>
void RegisterKerasMomentumKernelFor(KernelRegistry* kernels, const char* device_type) {
  kernels->Register<ApplyMomentumOp<Impl, T, /*kKeras=*/true>>(
      KernelDef("ResourceApplyKerasMomentum", device_type)
          .TypeConstraint("T", DataTypeToEnum<T>::value));
}

}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_TRAINING_KERNELS_H_
