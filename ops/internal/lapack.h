// The door to LAPACK (OpenBLAS's, through its Fortran entry points; Debian's
// OpenBLAS ships no LAPACKE) for the linear algebra kernels
// (ops/math/linalg_kernels.cc). Matrices are column-major, as LAPACK's:
// a kernel copies a row-major matrix in transposed, so LAPACK factors the
// matrix itself, and copies the result out transposed.
//
//   std::vector<int> pivots(n);
//   int info = internal::LuFactor(n, a, pivots.data());       // a = P L U
//   internal::LuSolve(/*transpose=*/false, n, k, a, pivots.data(), b);  // b := A^-1 b
//
// Each function returns LAPACK's `info`: 0 on success, > 0 for a numerical
// failure (a zero pivot; a matrix that is not positive definite), < 0 for an
// argument LAPACK refused (a bug here). Calls run single-threaded, as the
// GEMMs of ops/internal/blas.h: a kernel's batch loop is the parallelism.
// Thread-safe (no shared state).
#ifndef SLUICE_OPS_INTERNAL_LAPACK_H_
#define SLUICE_OPS_INTERNAL_LAPACK_H_

namespace sluice {
namespace internal {

// LU with partial pivoting of the n x n matrix `a` in place (getrf);
// pivots[i] is the 1-based row swapped with row i. info > 0: U(info, info)
// is exactly zero (the factorization is complete, the matrix singular).
int LuFactor(int n, float* a, int* pivots);
int LuFactor(int n, double* a, int* pivots);

// b (n x nrhs) := A^-1 b, or A^-T b when `transpose`, from LuFactor's
// result (getrs).
int LuSolve(bool transpose, int n, int nrhs, const float* lu, const int* pivots, float* b);
int LuSolve(bool transpose, int n, int nrhs, const double* lu, const int* pivots, double* b);

// The Cholesky factor L (A = L L^T) of the n x n matrix `a` in place, from
// its lower triangle (potrf); the strict upper triangle is left as it was.
// info > 0: the leading minor of that order is not positive definite.
int CholeskyLower(int n, float* a);
int CholeskyLower(int n, double* a);

// b (m x n) := op(A)^-1 b for the triangular m x m matrix A (trsm; A's
// other triangle is not read), `lower` or upper, op transposing when
// `transpose`. No check for a zero diagonal: it gives inf and nan, as
// TensorFlow's.
void TriangularSolve(bool lower, bool transpose, int m, int n, const float* a, float* b);
void TriangularSolve(bool lower, bool transpose, int m, int n, const double* a, double* b);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_LAPACK_H_
