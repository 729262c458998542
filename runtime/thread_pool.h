// ThreadPool: a fixed set of worker threads running scheduled closures.
//
//   ThreadPool pool("cpu0", 2);
//   pool.Schedule([] { ... });
//   pool.ParallelFor(n, /*min_block=*/4096, [&](int64_t begin, int64_t end) { ... });
//
// A worker that finishes a closure, and a ParallelFor caller whose helpers
// are still running, spin for up to kSpinMicros before they sleep: a kernel's
// GEMM blocks and a step's next nodes arrive microseconds apart, and waking a
// sleeping thread costs more than that (bench/matmul: a 256x256 GEMM split
// over two sleeping threads took 0.245 ms against 0.14 ms for OpenBLAS's own,
// spinning, threads). The spin reads one atomic and yields the core's
// pipeline (pause) between reads; an idle pool sleeps.
//
// Thread-safe. The destructor finishes the queued closures, then joins.
#ifndef SLUICE_RUNTIME_THREAD_POOL_H_
#define SLUICE_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

class ThreadPool {
 public:
  ThreadPool(std::string name, int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int num_threads() const { return static_cast<int>(threads_.size()); }
  // Whether the calling thread is one of this pool's.
  bool InPool() const;

  // Splits [0, total) into at most num_threads()+1 blocks of at least
  // `min_block` items, runs fn on each and waits. The calling thread runs
  // blocks too, so calling it from a pool thread cannot deadlock.
  void ParallelFor(int64_t total, int64_t min_block,
                   const std::function<void(int64_t, int64_t)>& fn);

  static constexpr int kSpinMicros = 50;

 private:
  void WorkerLoop();

  const std::string name_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> queued_{0};  // queue_.size(), for spinning without mu_
  std::vector<std::thread> threads_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_THREAD_POOL_H_
