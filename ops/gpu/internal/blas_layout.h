// How a row-major product maps onto column-major BLAS (cuBLAS, cuBLASLt):
// plain arithmetic, shared by the GPU GEMMs (internal/gpu_gemm.cc) and
// tested on the CPU against row-major products (blas_layout_test.cc).
//
//   internal::ColumnMajorGemm cm = internal::ToColumnMajor(ta, tb, m, n, k, lda, ldb);
//   // cublasGemmEx(h, cm.first.op, cm.second.op, cm.m, cm.n, cm.k, .., b, cm.first.ld,
//   //              a, cm.second.ld, .., c, cm.ldc, ..)
//
// A row-major matrix read as column-major is its transpose, so the
// row-major C[m,n] = op(A) op(B) is the column-major C^T[n,m] = op(B)^T
// op(A)^T: BLAS's first operand is the row-major B, its second the row-major
// A, each with its own transpose flag, m and n swapped. A bias over C's n
// columns is then a bias over the rows of the column-major output, and
// the column sums of op(B) are the first operand reduced over k (cuBLASLt's
// BIAS and BGRADA epilogues). Thread-safety: pure.
#ifndef SLUICE_OPS_GPU_INTERNAL_BLAS_LAYOUT_H_
#define SLUICE_OPS_GPU_INTERNAL_BLAS_LAYOUT_H_

#include <cstdint>

namespace sluice {
namespace internal {

// One operand as BLAS sees it: `rows` x `cols` stored column-major with
// leading dimension `ld`, transposed before the product when `transposed`.
struct ColumnMajorOperand {
  int64_t rows = 0, cols = 0, ld = 0;
  bool transposed = false;
};

// The column-major product out[m, n] = op(first)[m, k] op(second)[k, n].
struct ColumnMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  ColumnMajorOperand first, second;
  int64_t ldc = 0;
};

// For the row-major C[m,n] = op(A) op(B), A stored with rows of lda
// elements, B of ldb, C of n.
inline ColumnMajorGemm ToColumnMajor(bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                                     int64_t k, int64_t lda, int64_t ldb) {
  ColumnMajorGemm g;
  g.m = n;
  g.n = m;
  g.k = k;
  // B stored row-major [k, n] (or [n, k] transposed) reads as column-major
  // [n, k] (or [k, n]).
  g.first = {transpose_b ? k : n, transpose_b ? n : k, ldb, transpose_b};
  g.second = {transpose_a ? m : k, transpose_a ? k : m, lda, transpose_a};
  g.ldc = n;
  return g;
}

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_GPU_INTERNAL_BLAS_LAYOUT_H_
