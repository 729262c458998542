// LAPACK through the Fortran symbols of Debian's OpenBLAS (see lapack.h).
// Every argument goes by pointer; a character argument is followed by its
// hidden length, which gfortran-built LAPACK reads and OpenBLAS's own C
// versions of these routines ignore.
#include "ops/internal/lapack.h"

#include <cblas.h>

#include <cstddef>
#include <mutex>

extern "C" {
void openblas_set_num_threads(int num_threads);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t trans_len);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, size_t trans_len);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info,
             size_t uplo_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             size_t uplo_len);
}

namespace sluice {
namespace internal {
namespace {

// As ops/internal/blas.cc: OpenBLAS's own threads off, once, so that a
// kernel's calls share its device's cores instead of oversubscribing them.
void SingleThreaded() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

int Lda(int n) { return n > 0 ? n : 1; }  // LAPACK refuses a leading dimension of 0

}  // namespace

int LuFactor(int n, float* a, int* pivots) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  sgetrf_(&n, &n, a, &lda, pivots, &info);
  return info;
}
int LuFactor(int n, double* a, int* pivots) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  dgetrf_(&n, &n, a, &lda, pivots, &info);
  return info;
}

int LuSolve(bool transpose, int n, int nrhs, const float* lu, const int* pivots, float* b) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  const char trans = transpose ? 'T' : 'N';
  sgetrs_(&trans, &n, &nrhs, lu, &lda, pivots, b, &lda, &info, 1);
  return info;
}
int LuSolve(bool transpose, int n, int nrhs, const double* lu, const int* pivots, double* b) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  const char trans = transpose ? 'T' : 'N';
  dgetrs_(&trans, &n, &nrhs, lu, &lda, pivots, b, &lda, &info, 1);
  return info;
}

int CholeskyLower(int n, float* a) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  const char uplo = 'L';
  spotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
int CholeskyLower(int n, double* a) {
  SingleThreaded();
  int info = 0;
  const int lda = Lda(n);
  const char uplo = 'L';
  dpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}

// Column-major, as the functions above.
void TriangularSolve(bool lower, bool transpose, int m, int n, const float* a, float* b) {
  SingleThreaded();
  cblas_strsm(CblasColMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              transpose ? CblasTrans : CblasNoTrans, CblasNonUnit, m, n, 1.0f, a, Lda(m), b,
              Lda(m));
}
void TriangularSolve(bool lower, bool transpose, int m, int n, const double* a, double* b) {
  SingleThreaded();
  cblas_dtrsm(CblasColMajor, CblasLeft, lower ? CblasLower : CblasUpper,
              transpose ? CblasTrans : CblasNoTrans, CblasNonUnit, m, n, 1.0, a, Lda(m), b,
              Lda(m));
}

}  // namespace internal
}  // namespace sluice
