#include "ops/internal/blas.h"

#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "runtime/compute_pool.h"
#include "runtime/thread_pool.h"

extern "C" void openblas_set_num_threads(int num_threads);
// From libgomp, oneDNN's threading runtime; declared here rather than through
// <omp.h>, which clang (the fuzz builds) does not ship.
extern "C" void omp_set_num_threads(int num_threads);

namespace sluice {
namespace internal {
namespace {

// Below this many multiply-adds a GEMM runs in one piece: waking helpers
// costs more than it saves.
constexpr int64_t kMinSplitMacs = int64_t{1} << 21;
// Blocks narrower than this lose too much of the kernels' register tiling.
constexpr int kMinBlock = 32;

void SingleThreaded() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

ThreadPool* Pool() {
  if (ThreadPool* pool = CurrentComputePool()) return pool;
  static ThreadPool* const kDefault = new ThreadPool(
      "blas", static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) - 1);
  return kDefault;
}

// -1 until the first GEMM reads SLUICE_SGEMM, then a SgemmLibrary.
std::atomic<int> sgemm_library{-1};

SgemmLibrary FromEnvironment() {
  const char* value = std::getenv("SLUICE_SGEMM");
  if (value == nullptr || *value == '\0' || std::strcmp(value, "onednn") == 0) {
    return SgemmLibrary::kOneDnn;
  }
  if (std::strcmp(value, "openblas") == 0) return SgemmLibrary::kOpenBlas;
  std::fprintf(stderr, "sluice: SLUICE_SGEMM='%s' is neither onednn nor openblas; using onednn\n",
               value);
  return SgemmLibrary::kOneDnn;
}

void Call(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc, float beta) {
  // With k = 0 oneDNN leaves C as it is, where BLAS scales it by beta; and
  // it refuses only arguments cblas rejects too: cblas takes both cases, and
  // says what is wrong.
  if (CurrentSgemmLibrary() == SgemmLibrary::kOneDnn && k > 0) {
    // oneDNN's threads are OpenMP's, whose count is set per calling thread:
    // one, since the blocks are this file's to spread over a device's pool.
    thread_local const bool kOneThread = (omp_set_num_threads(1), true);
    (void)kOneThread;
    // Row-major, as cblas with CblasRowMajor.
    if (dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) ==
        dnnl_success) {
      return;
    }
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Call(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda,
          const double* b, int ldb, double* c, int ldc, double beta) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
void SplitGemm(bool ta, bool tb, int m, int n, int k, T alpha, const T* a, int lda, const T* b,
               int ldb, T* c, int ldc, T beta) {
  SingleThreaded();
  ThreadPool* pool = Pool();
  // A device's kernel runs on one of its pool's threads; outside a device
  // the caller is an extra thread beside the default pool's.
  const int threads = pool == CurrentComputePool() ? std::max(1, pool->num_threads())
                                                   : pool->num_threads() + 1;
  const bool split_rows = m >= n;
  const int extent = split_rows ? m : n;
  const int64_t macs = int64_t{m} * n * k;
  if (threads == 1 || macs < kMinSplitMacs || extent < 2 * kMinBlock) {
    Call(ta, tb, m, n, k, alpha, a, lda, b, ldb, c, ldc, beta);
    return;
  }
  const int blocks = std::min(threads, extent / kMinBlock);
  const int64_t per_block = (extent + blocks - 1) / blocks;
  pool->ParallelFor(extent, per_block, [&](int64_t begin, int64_t end) {
    const int i0 = static_cast<int>(begin), len = static_cast<int>(end - begin);
    if (split_rows) {
      // Rows i0.. of op(A) and of C.
      const T* a0 = ta ? a + i0 : a + int64_t{i0} * lda;
      Call(ta, tb, len, n, k, alpha, a0, lda, b, ldb, c + int64_t{i0} * ldc, ldc, beta);
    } else {
      // Columns i0.. of op(B) and of C.
      const T* b0 = tb ? b + int64_t{i0} * ldb : b + i0;
      Call(ta, tb, m, len, k, alpha, a, lda, b0, ldb, c + i0, ldc, beta);
    }
  });
}

}  // namespace

SgemmLibrary CurrentSgemmLibrary() {
  int library = sgemm_library.load(std::memory_order_relaxed);
  if (library < 0) {
    int unset = -1;
    sgemm_library.compare_exchange_strong(unset, static_cast<int>(FromEnvironment()));
    library = sgemm_library.load(std::memory_order_relaxed);
  }
  return static_cast<SgemmLibrary>(library);
}

void SetSgemmLibrary(SgemmLibrary library) {
  sgemm_library.store(static_cast<int>(library), std::memory_order_relaxed);
}

const char* SgemmLibraryName(SgemmLibrary library) {
  return library == SgemmLibrary::kOpenBlas ? "openblas" : "onednn";
}

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc, float beta) {
  SplitGemm(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, c, ldc, beta);
}

void Gemm(bool trans_a, bool trans_b, int m, int n, int k, const double* a, int lda,
          const double* b, int ldb, double* c, int ldc, double beta) {
  SplitGemm(trans_a, trans_b, m, n, k, 1.0, a, lda, b, ldb, c, ldc, beta);
}

void ScaledGemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a,
                int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  SplitGemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, c, ldc, beta);
}

}  // namespace internal
}  // namespace sluice
