#include "distributed/call_pool.h"

#include <utility>

namespace sluice {

CallPool::CallPool(std::string name, int max_idle)
    : name_(std::move(name)), max_idle_(max_idle < 0 ? 0 : max_idle) {}

CallPool::~CallPool() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // Idle threads wake, see the queue empty and exit; busy ones finish
    // their call (and anything still queued) first.
    mu_.Await(absl::Condition(
        +[](int* running) { return *running == 0; }, &running_));
    threads.swap(exited_);
  }
  for (std::thread& t : threads) t.join();
}

void CallPool::Schedule(std::function<void()> fn) {
  std::vector<std::thread> exited;
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(fn));
    exited.swap(exited_);
    if (idle_ > 0) {
      // An idle thread is waiting on the queue and takes the call.
      --idle_;
    } else {
      ++running_;
      ++started_;
      std::thread t([this] { Loop(); });
      threads_.emplace(t.get_id(), std::move(t));
    }
  }
  // Threads that left the pool are finished or about to be: joining is quick.
  for (std::thread& t : exited) t.join();
}

void CallPool::Loop() {
  absl::MutexLock lock(&mu_);
  // Invariant: threads waiting for a call == idle_ + queued calls, so every
  // queued call has a thread that will take it.
  while (true) {
    mu_.Await(absl::Condition(this, &CallPool::HasWorkOrStopping));
    if (queue_.empty()) break;  // stopping, nothing left to run
    std::function<void()> fn = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    fn();
    fn = nullptr;  // destroy captures outside the lock
    mu_.Lock();
    if (idle_ >= max_idle_ && !stopping_) {
      LeavePool();
      return;
    }
    ++idle_;
  }
  // Stopping: this thread was counted idle.
  --idle_;
  LeavePool();
}

void CallPool::LeavePool() {
  auto it = threads_.find(std::this_thread::get_id());
  if (it != threads_.end()) {
    exited_.push_back(std::move(it->second));
    threads_.erase(it);
  }
  --running_;
}

}  // namespace sluice
