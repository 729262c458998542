// LAPACK through the Fortran symbols of Debian's OpenBLAS (see lapack.h).
// Every argument goes by pointer; a character argument is followed by its
// hidden length, which gfortran-built LAPACK reads and OpenBLAS's own C
// versions of some routines ignore. Routines that take a workspace are asked
// for its size first (lwork = -1).
#include "ops/internal/lapack.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <mutex>
#include <vector>

extern "C" {
void openblas_set_num_threads(int num_threads);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, size_t);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda,
             const double* tau, double* work, const int* lwork, int* info);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
             double* w, double* work, const int* lwork, int* iwork, const int* liwork, int* info,
             size_t, size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work,
             const int* lwork, int* iwork, int* info, size_t);
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

int Ld(int n) { return std::max(n, 1); }  // LAPACK refuses a leading dimension of 0

// The routines of one precision.
template <typename T>
struct Routines;
template <>
struct Routines<float> {
  static constexpr auto getrf = sgetrf_;
  static constexpr auto getrs = sgetrs_;
  static constexpr auto potrf = spotrf_;
  static constexpr auto geqrf = sgeqrf_;
  static constexpr auto orgqr = sorgqr_;
  static constexpr auto syevd = ssyevd_;
  static constexpr auto gesdd = sgesdd_;
  static void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, int m, int n, const float* a,
                   float* b) {
    cblas_strsm(CblasColMajor, CblasLeft, uplo, trans, CblasNonUnit, m, n, 1.0f, a, Ld(m), b,
                Ld(m));
  }
};
template <>
struct Routines<double> {
  static constexpr auto getrf = dgetrf_;
  static constexpr auto getrs = dgetrs_;
  static constexpr auto potrf = dpotrf_;
  static constexpr auto geqrf = dgeqrf_;
  static constexpr auto orgqr = dorgqr_;
  static constexpr auto syevd = dsyevd_;
  static constexpr auto gesdd = dgesdd_;
  static void trsm(CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, int m, int n, const double* a,
                   double* b) {
    cblas_dtrsm(CblasColMajor, CblasLeft, uplo, trans, CblasNonUnit, m, n, 1.0, a, Ld(m), b,
                Ld(m));
  }
};

// The workspace size a query (lwork = -1) wrote into `size`, rounded up: a
// float holds sizes above 2^24 rounded, possibly down (LAPACK before 3.11
// does not round its answer up itself).
template <typename T>
int WorkSize(T size) {
  const double up = std::ceil(static_cast<double>(size) * (1.0 + 1e-6));
  return static_cast<int>(std::clamp(up, 1.0, static_cast<double>(INT_MAX)));
}

template <typename T>
int LuFactorT(int n, T* a, int* pivots) {
  SingleThreaded();
  int info = 0;
  const int lda = Ld(n);
  Routines<T>::getrf(&n, &n, a, &lda, pivots, &info);
  return info;
}

template <typename T>
int LuSolveT(bool transpose, int n, int nrhs, const T* lu, const int* pivots, T* b) {
  SingleThreaded();
  int info = 0;
  const int lda = Ld(n);
  const char trans = transpose ? 'T' : 'N';
  Routines<T>::getrs(&trans, &n, &nrhs, lu, &lda, pivots, b, &lda, &info, 1);
  return info;
}

template <typename T>
int CholeskyLowerT(int n, T* a) {
  SingleThreaded();
  int info = 0;
  const int lda = Ld(n);
  const char uplo = 'L';
  Routines<T>::potrf(&uplo, &n, a, &lda, &info, 1);
  return info;
}

template <typename T>
int QrT(int m, int n, T* a, int q_cols, T* q) {
  SingleThreaded();
  const int k = std::min(m, n);
  const int lda = Ld(m);
  std::vector<T> tau(std::max(k, 1));
  int info = 0, query = -1;
  T size = 0;
  Routines<T>::geqrf(&m, &n, a, &lda, tau.data(), &size, &query, &info);
  std::vector<T> work(WorkSize(size));
  int lwork = static_cast<int>(work.size());
  Routines<T>::geqrf(&m, &n, a, &lda, tau.data(), work.data(), &lwork, &info);
  if (info != 0) return info;
  // Q from the reflectors below R's diagonal: the first q_cols columns.
  std::fill(q, q + static_cast<size_t>(m) * q_cols, T(0));
  for (int j = 0; j < k; ++j) {
    const size_t at = static_cast<size_t>(j) * lda;
    std::copy(a + at, a + at + m, q + at);
  }
  if (m == 0 || q_cols == 0) return 0;
  Routines<T>::orgqr(&m, &q_cols, &k, q, &lda, tau.data(), &size, &query, &info);
  work.resize(WorkSize(size));
  lwork = static_cast<int>(work.size());
  Routines<T>::orgqr(&m, &q_cols, &k, q, &lda, tau.data(), work.data(), &lwork, &info);
  return info;
}

template <typename T>
int SymmetricEigenT(bool vectors, int n, T* a, T* w) {
  SingleThreaded();
  const char jobz = vectors ? 'V' : 'N', uplo = 'L';
  const int lda = Ld(n);
  int info = 0, query = -1, isize = 0;
  T size = 0;
  Routines<T>::syevd(&jobz, &uplo, &n, a, &lda, w, &size, &query, &isize, &query, &info, 1, 1);
  std::vector<T> work(WorkSize(size));
  std::vector<int> iwork(std::max(isize, 1));
  const int lwork = static_cast<int>(work.size()), liwork = static_cast<int>(iwork.size());
  Routines<T>::syevd(&jobz, &uplo, &n, a, &lda, w, work.data(), &lwork, iwork.data(), &liwork,
                     &info, 1, 1);
  return info;
}

template <typename T>
int SvdT(bool vectors, bool full, int m, int n, T* a, T* s, T* u, T* vt) {
  SingleThreaded();
  const char jobz = !vectors ? 'N' : full ? 'A' : 'S';
  const int k = std::min(m, n);
  const int lda = Ld(m), ldu = Ld(m), ldvt = Ld(vectors && full ? n : k);
  std::vector<int> iwork(std::max(8 * k, 1));
  T dummy = 0;
  T* uu = vectors ? u : &dummy;
  T* vv = vectors ? vt : &dummy;
  int info = 0, query = -1;
  T size = 0;
  Routines<T>::gesdd(&jobz, &m, &n, a, &lda, s, uu, &ldu, vv, &ldvt, &size, &query, iwork.data(),
                     &info, 1);
  std::vector<T> work(WorkSize(size));
  const int lwork = static_cast<int>(work.size());
  Routines<T>::gesdd(&jobz, &m, &n, a, &lda, s, uu, &ldu, vv, &ldvt, work.data(), &lwork,
                     iwork.data(), &info, 1);
  return info;
}

}  // namespace

int LuFactor(int n, float* a, int* pivots) { return LuFactorT(n, a, pivots); }
int LuFactor(int n, double* a, int* pivots) { return LuFactorT(n, a, pivots); }

int LuSolve(bool transpose, int n, int nrhs, const float* lu, const int* pivots, float* b) {
  return LuSolveT(transpose, n, nrhs, lu, pivots, b);
}
int LuSolve(bool transpose, int n, int nrhs, const double* lu, const int* pivots, double* b) {
  return LuSolveT(transpose, n, nrhs, lu, pivots, b);
}

int CholeskyLower(int n, float* a) { return CholeskyLowerT(n, a); }
int CholeskyLower(int n, double* a) { return CholeskyLowerT(n, a); }

void TriangularSolve(bool lower, bool transpose, int m, int n, const float* a, float* b) {
  SingleThreaded();
  Routines<float>::trsm(lower ? CblasLower : CblasUpper, transpose ? CblasTrans : CblasNoTrans, m,
                        n, a, b);
}
void TriangularSolve(bool lower, bool transpose, int m, int n, const double* a, double* b) {
  SingleThreaded();
  Routines<double>::trsm(lower ? CblasLower : CblasUpper, transpose ? CblasTrans : CblasNoTrans,
                         m, n, a, b);
}

int Qr(int m, int n, float* a, int q_cols, float* q) { return QrT(m, n, a, q_cols, q); }
int Qr(int m, int n, double* a, int q_cols, double* q) { return QrT(m, n, a, q_cols, q); }

int SymmetricEigen(bool vectors, int n, float* a, float* w) {
  return SymmetricEigenT(vectors, n, a, w);
}
int SymmetricEigen(bool vectors, int n, double* a, double* w) {
  return SymmetricEigenT(vectors, n, a, w);
}

int Svd(bool vectors, bool full, int m, int n, float* a, float* s, float* u, float* vt) {
  return SvdT(vectors, full, m, n, a, s, u, vt);
}
int Svd(bool vectors, bool full, int m, int n, double* a, double* s, double* u, double* vt) {
  return SvdT(vectors, full, m, n, a, s, u, vt);
}

}  // namespace internal
}  // namespace sluice
