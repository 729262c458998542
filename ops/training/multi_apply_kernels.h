// The device-independent shells of the multi-tensor updates
// (ops/training/multi_apply_ops.h), as training_kernels.h's are for one
// variable: they read, check and lock every variable, begin each one's
// copy-on-write update, and hand the device's Impl one list of pieces:
//
//   struct MyImpl {
//     template <typename T>
//     static absl::Status MultiGradientDescent(OpKernelContext* ctx,
//         absl::Span<const GradientDescentPiece<T>> pieces, const Tensor& alpha);
//     template <typename T>
//     static absl::Status MultiAdam(OpKernelContext* ctx,
//         absl::Span<const AdamPiece<T>> pieces, const AdamScalarInputs& s, bool nesterov);
//   };
//   RegisterMultiApplyKernelsFor<MyImpl, float>(kernels, kDeviceTypeGpu);
//
// The Impl is called with every lock held, after every check; pieces of
// zero elements are left out.
#ifndef SLUICE_OPS_TRAINING_MULTI_APPLY_KERNELS_H_
#define SLUICE_OPS_TRAINING_MULTI_APPLY_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "ops/state/state_ops.h"
#include "ops/training/training_kernels.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"

namespace sluice {

template <typename T>
struct GradientDescentPiece {
  T* var;
  const T* delta;
  int64_t n;
};

template <typename T>
struct AdamPiece {
  T* var;
  T* m;
  T* v;
  const T* grad;
  int64_t n;
};

namespace internal {

// Reads `lists` lists of n variables of T from input 0 on, checks that none
// is given twice, and locks them.
struct MultiVars {
  std::vector<Var*> all;  // list-major: all[k * n + i]
  template <typename T>
  static absl::StatusOr<MultiVars> Read(OpKernelContext* ctx, int lists, int n) {
    MultiVars v;
    for (int i = 0; i < lists * n; ++i) {
      ASSIGN_OR_RETURN(Var * var, VarInputOf<T>(ctx, i));
      v.all.push_back(var);
    }
    RETURN_IF_ERROR(CheckDistinct(ctx, v.all));
    return v;
  }
};

}  // namespace internal

// _MultiApplyGradientDescent(var: N * Ref(T), alpha, delta: N * T).
template <typename Impl, typename T>
class MultiApplyGradientDescentOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t n, ctx.GetAttr<int64_t>("N"));
    n_ = static_cast<int>(n);
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(internal::MultiVars vars, internal::MultiVars::Read<T>(ctx, 1, n_));
    RETURN_IF_ERROR(internal::CheckScalarInput(ctx, n_));
    internal::VarLockSet lock(vars.all);
    std::vector<internal::VarUpdate> updates;
    std::vector<GradientDescentPiece<T>> pieces;
    for (int i = 0; i < n_; ++i) {
      const Tensor& delta = ctx->input(n_ + 1 + i);
      ASSIGN_OR_RETURN(internal::VarUpdate u,
                       internal::VarUpdate::Begin(vars.all[i], ctx->device()));
      RETURN_IF_ERROR(
          internal::CheckSameShape(ctx, *vars.all[i], u.shape(), n_ + 1 + i, delta.shape()));
      if (u.size() > 0) pieces.push_back({u.data<T>(), delta.data<T>(), u.size()});
      updates.push_back(std::move(u));
    }
    RETURN_IF_ERROR(Impl::template MultiGradientDescent<T>(ctx, pieces, ctx->input(n_)));
    for (internal::VarUpdate& u : updates) u.Commit();
    for (int i = 0; i < n_; ++i) internal::SetRefOutput(ctx, i, vars.all[i]);
    return absl::OkStatus();
  }

 private:
  int n_ = 0;
};

// _MultiApplyAdam(var, m, v: N * Ref(T), six scalars, grad: N * T).
template <typename Impl, typename T>
class MultiApplyAdamOp : public internal::VariableKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(int64_t n, ctx.GetAttr<int64_t>("N"));
    n_ = static_cast<int>(n);
    ASSIGN_OR_RETURN(nesterov_, ctx.GetAttr<bool>("use_nesterov"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(internal::MultiVars vars, internal::MultiVars::Read<T>(ctx, 3, n_));
    const int s0 = 3 * n_;
    for (int k = 0; k < 6; ++k) RETURN_IF_ERROR(internal::CheckScalarInput(ctx, s0 + k));
    const AdamScalarInputs s{&ctx->input(s0),     &ctx->input(s0 + 1), &ctx->input(s0 + 2),
                             &ctx->input(s0 + 3), &ctx->input(s0 + 4), &ctx->input(s0 + 5)};
    internal::VarLockSet lock(vars.all);
    std::vector<internal::VarUpdate> updates;
    std::vector<AdamPiece<T>> pieces;
    for (int i = 0; i < n_; ++i) {
      const int g = s0 + 6 + i;
      const Tensor& grad = ctx->input(g);
      Var* var = vars.all[i];
      ASSIGN_OR_RETURN(internal::VarUpdate uv, internal::VarUpdate::Begin(var, ctx->device()));
      ASSIGN_OR_RETURN(internal::VarUpdate um,
                       internal::VarUpdate::Begin(vars.all[n_ + i], ctx->device()));
      ASSIGN_OR_RETURN(internal::VarUpdate uw,
                       internal::VarUpdate::Begin(vars.all[2 * n_ + i], ctx->device()));
      RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, uv.shape(), n_ + i, um.shape()));
      RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, uv.shape(), 2 * n_ + i, uw.shape()));
      RETURN_IF_ERROR(internal::CheckSameShape(ctx, *var, uv.shape(), g, grad.shape()));
      if (uv.size() > 0) {
        pieces.push_back({uv.data<T>(), um.data<T>(), uw.data<T>(), grad.data<T>(), uv.size()});
      }
      updates.push_back(std::move(uv));
      updates.push_back(std::move(um));
      updates.push_back(std::move(uw));
    }
    RETURN_IF_ERROR(Impl::template MultiAdam<T>(ctx, pieces, s, nesterov_));
    for (internal::VarUpdate& u : updates) u.Commit();
    for (int i = 0; i < n_; ++i) internal::SetRefOutput(ctx, i, vars.all[i]);
    return absl::OkStatus();
  }

 private:
  int n_ = 0;
  bool nesterov_ = false;
};

template <typename Impl, typename T>
void RegisterMultiApplyKernelsFor(KernelRegistry* kernels, const char* device_type) {
  constexpr DataType kType = DataTypeToEnum<T>::value;
  // The resource forms share the shells (internal::VarInput reads a handle;
  // SetRefOutput skips the outputs they lack).
  for (const char* prefix : {"_Multi", "_MultiResource"}) {
    kernels->Register<MultiApplyGradientDescentOp<Impl, T>>(
        KernelDef(absl::StrCat(prefix, "ApplyGradientDescent"), device_type)
            .TypeConstraint("T", kType));
    kernels->Register<MultiApplyAdamOp<Impl, T>>(
        KernelDef(absl::StrCat(prefix, "ApplyAdam"), device_type).TypeConstraint("T", kType));
  }
}

}  // namespace sluice

#endif  // SLUICE_OPS_TRAINING_MULTI_APPLY_KERNELS_H_
