// The thread pool a kernel's inner parallel loops run on: the pool of the
// device whose kernel is running, so that a kernel uses exactly its device's
// share of the cores and devices compute at once without oversubscribing
// the machine. The executor sets it around every kernel it runs;
// internal::Gemm (ops/internal/blas.h) splits a GEMM over it.
//
//   {
//     ScopedComputePool scoped(device->thread_pool());
//     kernel->Compute(&ctx);   // CurrentComputePool() == device->thread_pool()
//   }
//
// Outside any scope (a kernel called directly, e.g. by a test),
// CurrentComputePool() is nullptr. Thread-safe: the pool is per thread.
#ifndef SLUICE_RUNTIME_COMPUTE_POOL_H_
#define SLUICE_RUNTIME_COMPUTE_POOL_H_

#include "runtime/thread_pool.h"

namespace sluice {

ThreadPool* CurrentComputePool();

class ScopedComputePool {
 public:
  explicit ScopedComputePool(ThreadPool* pool);
  ~ScopedComputePool();
  ScopedComputePool(const ScopedComputePool&) = delete;
  ScopedComputePool& operator=(const ScopedComputePool&) = delete;

 private:
  ThreadPool* const previous_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_COMPUTE_POOL_H_
