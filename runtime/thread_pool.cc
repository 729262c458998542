#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include "runtime/cpu_share.h"

namespace sluice {
namespace {

thread_local const ThreadPool* owning_pool = nullptr;

// How long a waiting thread spins: kSpinMicros, or not at all when other
// processes compute on the machine's other cores (a launcher's tasks):
// there, every spin is taken from them (3 % of a parameter-server job's
// steps on two cores).
int SpinMicros() {
  static const int micros = SharesTheMachine() ? 0 : ThreadPool::kSpinMicros;
  return micros;
}

// Spins until `ready()` or for SpinMicros(); returns ready().
template <typename Ready>
bool SpinUntil(Ready ready) {
  const int micros = SpinMicros();
  if (micros == 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

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
  queued_.fetch_add(1, std::memory_order_release);
}

void ThreadPool::WorkerLoop() {
  owning_pool = this;
  while (true) {
    std::function<void()> fn;
    SpinUntil([this] { return queued_.load(std::memory_order_acquire) > 0; });
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
      queued_.fetch_sub(1, std::memory_order_relaxed);
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
    std::atomic<int64_t> done{0};  // written under mu, so that Await sees it
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
      state->done.fetch_add(1, std::memory_order_release);
    }
  };
  for (int64_t b = 1; b < blocks; ++b) Schedule(work);
  work();
  State* st = state.get();
  if (SpinUntil([st] { return st->done.load(std::memory_order_acquire) == st->blocks; })) {
    return;
  }
  absl::MutexLock lock(&st->mu);
  st->mu.Await(absl::Condition(
      +[](State* s) { return s->done.load(std::memory_order_acquire) == s->blocks; }, st));
}
}  // namespace sluice
