#include "runtime/collective/deadline_timer.h"

namespace sluice {
namespace internal {

CollectiveTimer::CollectiveTimer() : thread_([this] { Loop(); }) {}

CollectiveTimer::~CollectiveTimer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.Signal();
  }
  thread_.join();
}

uint64_t CollectiveTimer::Schedule(absl::Time deadline, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  uint64_t id = next_id_++;
  auto it = pending_.emplace(std::make_pair(deadline, id), std::move(fn)).first;
  deadline_of_.emplace(id, deadline);
  if (it == pending_.begin()) cv_.Signal();
  return id;
}

bool CollectiveTimer::Cancel(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = deadline_of_.find(id);
  if (it == deadline_of_.end()) return false;
  pending_.erase(std::make_pair(it->second, id));
  deadline_of_.erase(it);
  return true;
}

void CollectiveTimer::Loop() {
  mu_.Lock();
  while (!stopping_) {
    if (pending_.empty()) {
      cv_.Wait(&mu_);
      continue;
    }
    auto first = pending_.begin();
    if (first->first.first > absl::Now()) {
      cv_.WaitWithDeadline(&mu_, first->first.first);
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    deadline_of_.erase(first->first.second);
    pending_.erase(first);
    mu_.Unlock();
    fn();
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace internal
}  // namespace sluice
