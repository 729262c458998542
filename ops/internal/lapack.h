// The door to LAPACK (OpenBLAS's, through its Fortran entry points; Debian's
// OpenBLAS ships no LAPACKE) for the linear algebra kernels: LU, Cholesky,
// triangular solves, QR, symmetric eigenproblems and the SVD
// (ops/math/linalg_kernels.cc). Matrices are column-major, as LAPACK's:
// a kernel copies a row-major matrix in transposed, so LAPACK factors the
// matrix itself, and copies the result out transposed.
//
//   std::vector<int> pivots(n);
//   int info = internal::LuFactor(n, a, pivots.data());       // a = P L U
//   internal::LuSolve(/*transpose=*/false, n, k, a, pivots.data(), b);  // b := A^-1 b
//
// Each function returns LAPACK's `info`: 0 on success, > 0 for a numerical
// failure (a zero pivot; a matrix that is not positive definite; no
// convergence), < 0 for an argument LAPACK refused (a bug here). Sizes are
// LAPACK's 32-bit ints: a caller refuses matrices of more than INT_MAX
// elements. Calls run single-threaded, as the GEMMs of ops/internal/blas.h:
// a kernel's batch loop is the parallelism.
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

// QR of the m x n matrix `a` (geqrf, orgqr): R in a's upper triangle
// (its first min(m, n) rows; below them zero in exact arithmetic), and
// Q's first q_cols columns (min(m, n), or m for the full Q) into q (m x
// q_cols). Householder reflections as Eigen's: R's diagonal may be negative.
int Qr(int m, int n, float* a, int q_cols, float* q);
int Qr(int m, int n, double* a, int q_cols, double* q);

// Eigenvalues (ascending, into w[n]) of the symmetric n x n matrix `a`
// from its lower triangle (syevd), and, when `vectors`, the eigenvectors in
// a's columns. info > 0: the algorithm did not converge.
int SymmetricEigen(bool vectors, int n, float* a, float* w);
int SymmetricEigen(bool vectors, int n, double* a, double* w);

// Singular values (descending, into s[min(m, n)]) of the m x n matrix `a`
// (gesdd; a is overwritten) and, when `vectors`, U (m x min(m, n), or m x
// m when `full`) and V^T (min(m, n) x n, or n x n). info > 0: no
// convergence.
int Svd(bool vectors, bool full, int m, int n, float* a, float* s, float* u, float* vt);
int Svd(bool vectors, bool full, int m, int n, double* a, double* s, double* u, double* vt);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_LAPACK_H_
