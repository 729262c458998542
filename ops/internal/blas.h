// The one door to OpenBLAS for Sluice's kernels: row-major GEMM on raw
// buffers, C[m,n] = op(A)[m,k] * op(B)[k,n] + beta * C.
//
//   internal::Gemm(/*trans_a=*/false, /*trans_b=*/true, m, n, k, a, lda, b, ldb, c);
//   // C = alpha * op(A) op(B) + beta * C, e.g. an SGD step W -= lr * Xᵀ·dY:
//   internal::ScaledGemm(true, false, m, n, k, -lr, x, lda, dy, ldb, 1.0f, w, ldc);
//
// OpenBLAS runs every GEMM on its own process-wide pool that already uses all
// cores. Two GEMMs issued at once (the executor runs independent nodes in
// parallel, e.g. a layer's input and weight gradients) oversubscribe the
// cores and both run far slower (measured: 9.7 ms for a pair that takes 5.5 ms
// in turn; bench/RESULTS.md). So calls are serialized by one process-wide
// mutex; other kernels keep running beside them.
//
// Thread-safe.
#ifndef SLUICE_OPS_INTERNAL_BLAS_H_
#define SLUICE_OPS_INTERNAL_BLAS_H_

#include <cblas.h>

#include "absl/synchronization/mutex.h"

namespace sluice {
namespace internal {

absl::Mutex& BlasMutex();

inline void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
                 const float* b, int ldb, float* c, int ldc, float beta = 0.0f) {
  absl::MutexLock lock(&BlasMutex());
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// C[m,n] = alpha * op(A) op(B) + beta * C (float only: the fused kernels'
// entry, ops/fused_kernels.cc). Same lock as Gemm.
inline void ScaledGemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc) {
  absl::MutexLock lock(&BlasMutex());
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

inline void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const double* a, int lda,
                 const double* b, int ldb, double* c, int ldc, double beta = 0.0) {
  absl::MutexLock lock(&BlasMutex());
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_BLAS_H_
