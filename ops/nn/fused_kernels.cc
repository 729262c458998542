// CPU kernels of the fused ops (ops/nn/fused_ops.h), float only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ops/nn/fused_ops.h"
#include "ops/internal/blas.h"
#include "ops/nn/internal/fused_matmul_attrs.h"
#include "ops/nn/internal/fused_gemm.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "ops/state/state_ops.h"
#include "runtime/kernel.h"

namespace sluice {
namespace {

// _FusedMatMul: the output filled with the bias, GEMM with beta = 1, then the
// ReLU in place (internal::FusedGemm, kBetaOne: 4-6 % faster than the
// epilogue pass at the MLP's shapes, bench/fused_matmul).
class FusedMatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(attrs_, internal::ReadFusedMatMulAttrs(ctx, "CPU"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const Tensor& bias = ctx->input(2);
    ASSIGN_OR_RETURN(internal::MatMulDims d,
                     internal::CheckFusedMatMulInputs(*ctx, attrs_, "BLAS"));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    if (d.m == 0 || d.n == 0) return absl::OkStatus();
    internal::FusedGemmArgs g;
    g.transpose_a = attrs_.transpose_a;
    g.transpose_b = attrs_.transpose_b;
    // CheckMatMulShapes has checked that every dimension fits in an int.
    g.m = static_cast<int>(d.m);
    g.n = static_cast<int>(d.n);
    g.k = static_cast<int>(d.k);
    g.a = a.data<float>();
    g.lda = static_cast<int>(a.dim_size(1));
    g.b = b.data<float>();
    g.ldb = static_cast<int>(b.dim_size(1));
    g.bias = bias.data<float>();
    g.activation = attrs_.relu ? internal::Activation::kRelu : internal::Activation::kNone;
    g.out = out->data<float>();
    internal::FusedGemm(g, ctx->thread_pool(), internal::BiasPlacement::kBetaOne);
    return absl::OkStatus();
  }

 private:
  internal::FusedMatMulKernelAttrs attrs_;
};

// _MatMulApplyGradientDescent: var = -alpha * op(a) op(b) + var, one GEMM
// into the variable's buffer under its lock, copy-on-write like every Apply
// op (internal::VarUpdate): readers holding the old value keep it.
class MatMulApplyGradientDescentOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(transpose_a_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(transpose_b_, ctx.GetAttr<bool>("transpose_b"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    ASSIGN_OR_RETURN(Var * var, internal::VarInputOf<float>(ctx, 0));
    RETURN_IF_ERROR(internal::CheckScalarInput(ctx, 1));
    const Tensor& a = ctx->input(2);
    const Tensor& b = ctx->input(3);
    ASSIGN_OR_RETURN(internal::MatMulDims d,
                     internal::CheckMatMulShapes(a, b, transpose_a_, transpose_b_, "BLAS"));
    internal::VarLockSet lock({var});
    ASSIGN_OR_RETURN(internal::VarUpdate u, internal::VarUpdate::Begin(var, ctx->device()));
    if (u.shape() != TensorShape({d.m, d.n})) {
      return absl::InvalidArgumentError(absl::StrCat(
          "_MatMulApplyGradientDescent: var ", var->name, " has shape ", u.shape().DebugString(),
          " but the product of a and b has shape [", d.m, ",", d.n, "]"));
    }
    if (d.m > 0 && d.n > 0 && d.k > 0) {
      const float alpha = ctx->input(1).scalar<float>();
      internal::ScaledGemm(transpose_a_, transpose_b_, static_cast<int>(d.m),
                           static_cast<int>(d.n), static_cast<int>(d.k), -alpha,
                           a.data<float>(), static_cast<int>(a.dim_size(1)), b.data<float>(),
                           static_cast<int>(b.dim_size(1)), 1.0f, u.data<float>(),
                           static_cast<int>(d.n));
    }
    u.Commit();
    internal::SetRefOutput(ctx, 0, var);
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

// _MatMulBiasAddGrad: the product by one GEMM, then the column sums of
// op(b) in one pass over b (the CPU has no epilogue to fold them into).
class MatMulBiasAddGradOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(transpose_a_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(transpose_b_, ctx.GetAttr<bool>("transpose_b"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(internal::MatMulDims d,
                     internal::CheckMatMulShapes(a, b, transpose_a_, transpose_b_, "BLAS"));
    ASSIGN_OR_RETURN(Tensor * product, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    ASSIGN_OR_RETURN(Tensor * bias_grad, ctx->allocate_output(1, TensorShape({d.n})));
    float* out = product->data<float>();
    if (d.k == 0) {
      std::fill(out, out + d.m * d.n, 0.0f);
    } else if (d.m > 0 && d.n > 0) {
      internal::ScaledGemm(transpose_a_, transpose_b_, static_cast<int>(d.m),
                           static_cast<int>(d.n), static_cast<int>(d.k), 1.0f, a.data<float>(),
                           static_cast<int>(a.dim_size(1)), b.data<float>(),
                           static_cast<int>(b.dim_size(1)), 0.0f, out, static_cast<int>(d.n));
    }
    // op(b) is [k, n]: b itself ([k, n], summed down its columns) or its
    // transpose (b [n, k], summed along its rows).
    const float* in = b.data<float>();
    float* sums = bias_grad->data<float>();
    std::fill(sums, sums + d.n, 0.0f);
    for (int64_t r = 0; r < b.dim_size(0); ++r) {
      const float* row = in + r * b.dim_size(1);
      if (transpose_b_) {
        float total = 0;
        for (int64_t c = 0; c < d.k; ++c) total += row[c];
        sums[r] = total;
      } else {
        for (int64_t c = 0; c < d.n; ++c) sums[c] += row[c];
      }
    }
    return absl::OkStatus();
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
};

}  // namespace

void RegisterFusedKernels(KernelRegistry* kernels) {
  kernels->Register<FusedMatMulOp>(
      KernelDef("_FusedMatMul", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  kernels->Register<MatMulApplyGradientDescentOp>(
      KernelDef("_MatMulApplyGradientDescent", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
  kernels->Register<MatMulBiasAddGradOp>(
      KernelDef("_MatMulBiasAddGrad", kDeviceTypeCpu).TypeConstraint("T", DT_FLOAT));
}

}  // namespace sluice
