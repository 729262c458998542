// MatMul written once for every device (the pattern of
// ops/training/training_kernels.h): the shell reads transpose_a / transpose_b, checks
// the shapes and allocates the output; a device's `Impl` (one object per
// kernel, so it may read attrs of its own) multiplies:
//
//   static constexpr const char* kLibrary      named in shape errors ("BLAS")
//   absl::Status Init(const OpKernelConstruction&)   the device's own attrs
//   absl::Status Gemm(OpKernelContext*, const MatMulArgs&, Tensor* out)
//                                               out = op(a) op(b); m, n, k >= 1
//   absl::Status Zero(OpKernelContext*, Tensor* out)
//                                               out = 0 (k == 0: an empty sum)
//
// Gemm and Zero are called only with a non-empty output; they may run
// concurrently on one kernel (no state of their own beyond Init's).
#ifndef SLUICE_OPS_MATH_MATMUL_KERNELS_H_
#define SLUICE_OPS_MATH_MATMUL_KERNELS_H_

#include "base/status_macros.h"
#include "ops/math/internal/math_kernel_checks.h"
#include "runtime/kernel.h"

namespace sluice {

// One product's operands and their row-major dimensions: out[m, n] =
// op(a)[m, k] op(b)[k, n], each operand stored with `lda` / `ldb` elements
// per row.
struct MatMulArgs {
  const Tensor& a;
  const Tensor& b;
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0, n = 0, k = 0;
  int lda = 0, ldb = 0;
};

template <typename Impl>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(transpose_a_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(transpose_b_, ctx.GetAttr<bool>("transpose_b"));
    return impl_.Init(ctx);
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(internal::MatMulDims d, internal::CheckMatMulShapes(a, b, transpose_a_,
                                                                         transpose_b_,
                                                                         Impl::kLibrary));
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({d.m, d.n})));
    if (d.m == 0 || d.n == 0) return absl::OkStatus();
    if (d.k == 0) return impl_.Zero(ctx, out);
    // CheckMatMulShapes has checked that every dimension fits in an int.
    const MatMulArgs args{a,
                          b,
                          transpose_a_,
                          transpose_b_,
                          static_cast<int>(d.m),
                          static_cast<int>(d.n),
                          static_cast<int>(d.k),
                          static_cast<int>(a.dim_size(1)),
                          static_cast<int>(b.dim_size(1))};
    return impl_.Gemm(ctx, args, out);
  }

 private:
  bool transpose_a_ = false;
  bool transpose_b_ = false;
  Impl impl_;
};

}  // namespace sluice

#endif  // SLUICE_OPS_MATH_MATMUL_KERNELS_H_
