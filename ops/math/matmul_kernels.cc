// The CPU's part of MatMul (the shell: ops/math/matmul_kernels.h): OpenBLAS gemm
// (ops/internal/blas.h) on the tensors' buffers for float and double, a
// plain loop for int32 and int64.
// Compiled like math_kernels.cc (see there): -O3 without FP traps, set before
// any include.
#pragma GCC optimize("O3", "no-trapping-math")

#include <algorithm>
#include <cstdint>

#include "base/status_macros.h"
#include "ops/internal/bf16_gemm.h"
#include "ops/internal/blas.h"
#include "ops/math/internal/math_kernel_util.h"
#include "ops/math/math_ops.h"
#include "ops/math/matmul_kernels.h"

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

// The CPU's part of MatMulOp (ops/math/matmul_kernels.h).
template <typename T>
struct CpuMatMulImpl {
  static constexpr const char* kLibrary = "BLAS";
  absl::Status Init(const OpKernelConstruction&) { return absl::OkStatus(); }
  absl::Status Gemm(OpKernelContext*, const MatMulArgs& p, Tensor* out) const {
    sluice::Gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, p.a.data<T>(), p.lda,
                 p.b.data<T>(), p.ldb, out->data<T>());
    return absl::OkStatus();
  }
  absl::Status Zero(OpKernelContext*, Tensor* out) const {
    std::fill(out->data<T>(), out->data<T>() + out->NumElements(), T(0));
    return absl::OkStatus();
  }
};

// bfloat16 (mixed precision's MatMuls): oneDNN's bf16 GEMM into a float
// scratch, rounded once into the output.
template <>
struct CpuMatMulImpl<BFloat16> {
  static constexpr const char* kLibrary = "oneDNN bf16";
  absl::Status Init(const OpKernelConstruction&) { return absl::OkStatus(); }
  absl::Status Gemm(OpKernelContext* ctx, const MatMulArgs& p, Tensor* out) const {
    ASSIGN_OR_RETURN(Tensor acc, ctx->allocate_temp(DT_FLOAT, out->shape()));
    internal::Bf16Gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, p.a.data<BFloat16>(), p.lda,
                       p.b.data<BFloat16>(), p.ldb, 0.0f, acc.data<float>(), p.n);
    internal::FloatToBf16(acc.data<float>(), out->data<BFloat16>(), out->NumElements());
    return absl::OkStatus();
  }
  absl::Status Zero(OpKernelContext*, Tensor* out) const {
    std::fill(out->data<BFloat16>(), out->data<BFloat16>() + out->NumElements(), BFloat16{});
    return absl::OkStatus();
  }
};

}  // namespace

namespace internal {

void RegisterMatMulKernels(KernelRegistry* k) {
  k->Register<MatMulOp<CpuMatMulImpl<float>>>(Cpu<float>("MatMul"));
  k->Register<MatMulOp<CpuMatMulImpl<double>>>(Cpu<double>("MatMul"));
  k->Register<MatMulOp<CpuMatMulImpl<int32_t>>>(Cpu<int32_t>("MatMul"));
  k->Register<MatMulOp<CpuMatMulImpl<int64_t>>>(Cpu<int64_t>("MatMul"));
  k->Register<MatMulOp<CpuMatMulImpl<BFloat16>>>(Cpu<BFloat16>("MatMul"));
}

}  // namespace internal
}  // namespace sluice
