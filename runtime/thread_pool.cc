#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>


namespace sluice {
namespace {

thread_local const ThreadPool* owning_pool = nullptr;

}  // namespace

bool ThreadPool::InPool() const { return owning_pool == this; }

ThreadPool::ThreadPool(std::string name, int num_threads) : name_(std::move(name)) {
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  if (threads_.empty()) {
    fn();
    return;
  }
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(fn));
}

void ThreadPool::WorkerLoop() {
  owning_pool = this;
  while (true) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ThreadPool* p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(p->mu_) {
            return p->stopping_ || !p->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and the queue is drained
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

// Blocks are claimed from a shared counter by the caller and by helper
// closures alike, so the call finishes even when every pool thread is busy
// (a kernel running on a pool thread may call ParallelFor): the caller then
// runs all blocks itself. The shared state outlives the call, because helper
// closures may start after it returns; they then find no block left and never
// touch `fn`.
void ThreadPool::ParallelFor(int64_t total, int64_t min_block,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  min_block = std::max<int64_t>(min_block, 1);
  const int64_t blocks = std::min<int64_t>(static_cast<int64_t>(threads_.size()) + 1,
                                           (total + min_block - 1) / min_block);
  if (blocks <= 1) {
    fn(0, total);
    return;
  }
  struct State {
    std::atomic<int64_t> next{0};
    int64_t blocks = 0;
    absl::Mutex mu;
    int64_t done ABSL_GUARDED_BY(mu) = 0;
  };
  auto state = std::make_shared<State>();
  state->blocks = blocks;
  const int64_t block = (total + blocks - 1) / blocks;
  const auto* body = &fn;
  auto work = [state, block, total, body] {
    for (int64_t b = state->next.fetch_add(1); b < state->blocks; b = state->next.fetch_add(1)) {
      const int64_t begin = b * block, end = std::min(total, begin + block);
      if (begin < end) (*body)(begin, end);
      absl::MutexLock lock(&state->mu);
      ++state->done;
    }
  };
  for (int64_t b = 1; b < blocks; ++b) Schedule(work);
  work();
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(
      +[](State* st) ABSL_EXCLUSIVE_LOCKS_REQUIRED(st->mu) { return st->done == st->blocks; },
      state.get()));
}
}  // namespace sluice
