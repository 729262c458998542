// CPU kernels of the training ops: tight elementwise loops over variables
// locked in address order, written copy-on-write (internal::VarUpdate), with
// __restrict pointers so the compiler vectorizes them.
#include <cmath>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_apply_shell.h"
#include "ops/training/training_ops.h"

namespace sluice {
namespace {

using internal::CheckDistinct;
using internal::CheckSameShape;
using internal::VarLockSet;
using internal::VarUpdate;

// The scalar on input `i`, or InvalidArgument naming the argument.
template <typename T>
absl::StatusOr<T> ScalarInput(OpKernelContext* ctx, int i) {
  RETURN_IF_ERROR(internal::CheckScalarInput(ctx, i));
  return ctx->input(i).scalar<T>();
}

template <typename T>
class ApplyGradientDescentOp : public OpKernel {
 public:
  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(const T alpha, ScalarInput<T>(ctx, 1));
    const Tensor& delta = ctx->input(2);
    VarLockSet lock({var});
    ASSIGN_OR_RETURN(VarUpdate u, VarUpdate::Begin(var, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u.shape(), 2, delta.shape()));
    Update(u.data<T>(), delta.data<T>(), alpha, u.size());
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  // Out of line: inlined into Compute, GCC loses __restrict and the loop
  // stays scalar.
  ABSL_ATTRIBUTE_NOINLINE static void Update(T* __restrict var, const T* __restrict delta, T alpha,
                                             int64_t n) {
    internal::ForEachIndex(n, [=](int64_t i) { var[i] -= alpha * delta[i]; });
  }
};

template <typename T>
class ApplyMomentumOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(Var * accum, internal::VarInput(ctx, 1));
    ASSIGN_OR_RETURN(const T lr, ScalarInput<T>(ctx, 2));
    const Tensor& grad = ctx->input(3);
    ASSIGN_OR_RETURN(const T momentum, ScalarInput<T>(ctx, 4));
    RETURN_IF_ERROR(CheckDistinct(ctx, {var, accum}));
    VarLockSet lock({var, accum});
    ASSIGN_OR_RETURN(VarUpdate uv, VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate ua, VarUpdate::Begin(accum, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, uv.shape(), 1, ua.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, uv.shape(), 3, grad.shape()));
    if (nesterov_) {
      Update<true>(uv.data<T>(), ua.data<T>(), grad.data<T>(), lr, momentum, uv.size());
    } else {
      Update<false>(uv.data<T>(), ua.data<T>(), grad.data<T>(), lr, momentum, uv.size());
    }
    uv.Commit();
    ua.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  // Out of line (see ApplyGradientDescentOp::Update).
  template <bool kNesterov>
  ABSL_ATTRIBUTE_NOINLINE static void Update(T* __restrict var, T* __restrict accum,
                                             const T* __restrict grad, T lr, T momentum,
                                             int64_t n) {
    internal::ForEachIndex(n, [=](int64_t i) {
      const T a = accum[i] * momentum + grad[i];
      accum[i] = a;
      if (kNesterov) {
        var[i] -= grad[i] * lr + a * momentum * lr;
      } else {
        var[i] -= lr * a;
      }
    });
  }

  bool nesterov_ = false;
};

template <typename T>
class ApplyAdamOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInput(ctx, 0));
    ASSIGN_OR_RETURN(Var * m, internal::VarInput(ctx, 1));
    ASSIGN_OR_RETURN(Var * v, internal::VarInput(ctx, 2));
    Hyper h;
    ASSIGN_OR_RETURN(h.beta1_power, ScalarInput<T>(ctx, 3));
    ASSIGN_OR_RETURN(h.beta2_power, ScalarInput<T>(ctx, 4));
    ASSIGN_OR_RETURN(h.lr, ScalarInput<T>(ctx, 5));
    ASSIGN_OR_RETURN(h.beta1, ScalarInput<T>(ctx, 6));
    ASSIGN_OR_RETURN(h.beta2, ScalarInput<T>(ctx, 7));
    ASSIGN_OR_RETURN(h.epsilon, ScalarInput<T>(ctx, 8));
    const Tensor& grad = ctx->input(9);
    RETURN_IF_ERROR(CheckDistinct(ctx, {var, m, v}));
    VarLockSet lock({var, m, v});
    ASSIGN_OR_RETURN(VarUpdate u_var, VarUpdate::Begin(var, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate u_m, VarUpdate::Begin(m, ctx->device()));
    ASSIGN_OR_RETURN(VarUpdate u_v, VarUpdate::Begin(v, ctx->device()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 1, u_m.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 2, u_v.shape()));
    RETURN_IF_ERROR(CheckSameShape(ctx, *var, u_var.shape(), 9, grad.shape()));
    if (nesterov_) {
      Update<true>(h, grad.data<T>(), u_var.data<T>(), u_m.data<T>(), u_v.data<T>(), u_var.size());
    } else {
      Update<false>(h, grad.data<T>(), u_var.data<T>(), u_m.data<T>(), u_v.data<T>(), u_var.size());
    }
    u_var.Commit();
    u_m.Commit();
    u_v.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  struct Hyper {
    T beta1_power, beta2_power, lr, beta1, beta2, epsilon;
  };

  // Out of line (see ApplyGradientDescentOp::Update).
  template <bool kNesterov>
  ABSL_ATTRIBUTE_NOINLINE static void Update(const Hyper& h, const T* __restrict g,
                                             T* __restrict var, T* __restrict m, T* __restrict v,
                                             int64_t n) {
    const T one(1);
    const T lr_t = h.lr * std::sqrt(one - h.beta2_power) / (one - h.beta1_power);
    const T one_minus_beta1 = one - h.beta1;
    const T one_minus_beta2 = one - h.beta2;
    const T beta1 = h.beta1;
    const T epsilon = h.epsilon;
    internal::ForEachIndex(n, [=](int64_t i) {
      const T gi = g[i];
      const T mi = m[i] + (gi - m[i]) * one_minus_beta1;
      const T vi = v[i] + (gi * gi - v[i]) * one_minus_beta2;
      m[i] = mi;
      v[i] = vi;
      const T step = kNesterov ? mi * beta1 + one_minus_beta1 * gi : mi;
      var[i] -= lr_t * step / (std::sqrt(vi) + epsilon);
    });
  }

  bool nesterov_ = false;
};

template <typename T>
void RegisterForType(KernelRegistry* kernels) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  kernels->Register<ApplyGradientDescentOp<T>>(
      KernelDef("ApplyGradientDescent", kDeviceTypeCpu).TypeConstraint("T", kType));
  kernels->Register<ApplyMomentumOp<T>>(
      KernelDef("ApplyMomentum", kDeviceTypeCpu).TypeConstraint("T", kType));
  kernels->Register<ApplyAdamOp<T>>(
      KernelDef("ApplyAdam", kDeviceTypeCpu).TypeConstraint("T", kType));
  // The resource forms: the same kernels (internal::VarInput reads a handle).
  kernels->Register<ApplyGradientDescentOp<T>>(
      KernelDef("ResourceApplyGradientDescent", kDeviceTypeCpu).TypeConstraint("T", kType));
  kernels->Register<ApplyMomentumOp<T>>(
      KernelDef("ResourceApplyMomentum", kDeviceTypeCpu).TypeConstraint("T", kType));
  kernels->Register<ApplyAdamOp<T>>(
      KernelDef("ResourceApplyAdam", kDeviceTypeCpu).TypeConstraint("T", kType));
}

}  // namespace

void RegisterTrainingKernels(KernelRegistry* kernels) {
  RegisterForType<float>(kernels);
  RegisterForType<double>(kernels);
  internal::RegisterAdaptiveTrainingKernels(kernels);
  internal::RegisterFtrlTrainingKernels(kernels);
}

}  // namespace sluice
