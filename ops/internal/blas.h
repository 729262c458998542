// The one door to the GEMM libraries for Sluice's kernels: row-major GEMM
// on raw buffers, C[m,n] = op(A)[m,k] * op(B)[k,n] + beta * C.
//
//   internal::Gemm(/*trans_a=*/false, /*trans_b=*/true, m, n, k, a, lda, b, ldb, c, ldc);
//   // C = alpha * op(A) op(B) + beta * C, e.g. an SGD step W -= lr * Xᵀ·dY:
//   internal::ScaledGemm(true, false, m, n, k, -lr, x, lda, dy, ldb, 1.0f, w, ldc);
//
// A GEMM uses exactly the cores of the device whose kernel calls it: it is
// split into one block of rows (or columns) of C per thread of the running
// kernel's device pool (CurrentComputePool(), runtime/compute_pool.h), and
// every block is a single-threaded library call: oneDNN's dnnl_sgemm for
// float, OpenBLAS for double. The libraries' own threads are turned off
// (OpenMP's per calling thread, OpenBLAS's at the first call), since their
// pools cannot be shared out per device: two devices' GEMMs then run at once,
// each on its own cores, and two GEMMs of one device share its threads (the
// blocks are claimed from the pool's queue) instead of oversubscribing the
// machine. Chosen by measurement (bench/gemm_share.cc, bench/RESULTS.md):
// single-threaded calls on two threads at once run at nearly twice the rate
// of one; per core, oneDNN 2.6's sgemm is 4-20% faster than OpenBLAS 0.3.21's
// on the MLP's shapes, and Debian's BLIS 0.9 (whose expert API takes a thread
// count per call) was 2.5x slower.
//
// Outside a device (no current pool), a GEMM uses a process-wide pool with
// one thread per core. GEMMs under about 4 MFLOP are not split.
//
// The environment variable SLUICE_SGEMM=openblas puts float GEMMs on OpenBLAS
// too (on a machine where it measures faster; the two round differently in
// the last bit). It is read at the first GEMM; SetSgemmLibrary overrides it.
//
// Thread-safe.
#ifndef SLUICE_OPS_INTERNAL_BLAS_H_
#define SLUICE_OPS_INTERNAL_BLAS_H_

namespace sluice {
namespace internal {

enum class SgemmLibrary { kOneDnn = 0, kOpenBlas = 1 };

// The library float GEMMs use now, and a switch for benchmarks and tests
// (GEMMs already running finish on the library they started with).
SgemmLibrary CurrentSgemmLibrary();
void SetSgemmLibrary(SgemmLibrary library);
const char* SgemmLibraryName(SgemmLibrary library);

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc, float beta = 0.0f);

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const double* a, int lda,
          const double* b, int ldb, double* c, int ldc, double beta = 0.0);

// C[m,n] = alpha * op(A) op(B) + beta * C (float only: the fused kernels'
// entry, ops/nn/fused_kernels.cc), split the same way.
void ScaledGemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_INTERNAL_BLAS_H_
