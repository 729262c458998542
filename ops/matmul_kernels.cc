// CPU kernel of MatMul: OpenBLAS gemm (ops/internal/blas.h) on the tensors'
// buffers for float and double, a plain loop for int32 and int64.
// Compiled like math_kernels.cc (see there): -O3 without FP traps, set before
// any include.
#pragma GCC optimize("O3", "no-trapping-math")


#include <algorithm>
#include <cstdint>

#include "base/status_macros.h"
#include "ops/internal/blas.h"
#include "ops/internal/math_kernel_checks.h"
#include "ops/internal/math_kernel_util.h"
#include "ops/math_ops.h"

namespace sluice {
namespace {

// C[m,n] = op(A) op(B), row-major, leading dimensions as stored.
void Gemm(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b,
          int ldb, float* c) {
  internal::Gemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
}
void Gemm(bool ta, bool tb, int m, int n, int k, const double* a, int lda, const double* b,
          int ldb, double* c) {
  internal::Gemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
}
template <typename T>
void Gemm(bool ta, bool tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb,
          T* c) {
  std::fill(c, c + int64_t{m} * n, T(0));
  for (int i = 0; i < m; ++i) {
    T* ci = c + int64_t{i} * n;
    for (int p = 0; p < k; ++p) {
      const T av = ta ? a[int64_t{p} * lda + i] : a[int64_t{i} * lda + p];
      if (tb) {
        for (int j = 0; j < n; ++j) ci[j] += av * b[int64_t{j} * ldb + p];
      } else {
        const T* bp = b + int64_t{p} * ldb;
        for (int j = 0; j < n; ++j) ci[j] += av * bp[j];
      }
    }
  }
}

template <typename T>
class MatMulOp : public OpKernel {
 public:
  absl::Status Init(const OpKernelConstruction& ctx) override {
    ASSIGN_OR_RETURN(ta_, ctx.GetAttr<bool>("transpose_a"));
    ASSIGN_OR_RETURN(tb_, ctx.GetAttr<bool>("transpose_b"));
    return absl::OkStatus();
  }

  absl::Status Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    ASSIGN_OR_RETURN(internal::MatMulDims d, internal::CheckMatMulShapes(a, b, ta_, tb_, "BLAS"));
    const int64_t m = d.m, k = d.k, n = d.n;
    ASSIGN_OR_RETURN(Tensor * out, ctx->allocate_output(0, TensorShape({m, n})));
    if (m == 0 || n == 0) return absl::OkStatus();
    T* c = out->data<T>();
    if (k == 0) {
      std::fill(c, c + m * n, T(0));
      return absl::OkStatus();
    }
    Gemm(ta_, tb_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), a.data<T>(),
         static_cast<int>(a.dim_size(1)), b.data<T>(), static_cast<int>(b.dim_size(1)), c);
    return absl::OkStatus();
  }

 private:
  bool ta_ = false;
  bool tb_ = false;
};

}  // namespace

namespace internal {

void RegisterMatMulKernels(KernelRegistry* k) {
  k->Register<MatMulOp<float>>(Cpu<float>("MatMul"));
  k->Register<MatMulOp<double>>(Cpu<double>("MatMul"));
  k->Register<MatMulOp<int32_t>>(Cpu<int32_t>("MatMul"));
  k->Register<MatMulOp<int64_t>>(Cpu<int64_t>("MatMul"));
}

}  // namespace internal
}  // namespace sluice
