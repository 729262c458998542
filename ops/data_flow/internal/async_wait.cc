#include "ops/data_flow/internal/async_wait.h"

#include <string>

namespace sluice {
namespace internal {
namespace {

class TimerResource : public ResourceBase {
 public:
  std::string DebugString() const override { return "DeadlineTimer"; }
  const std::shared_ptr<DeadlineTimer> timer = std::make_shared<DeadlineTimer>();
};

constexpr char kTimerName[] = "_sluice_deadline_timer";

}  // namespace

DeadlineTimer::~DeadlineTimer() {
  std::thread thread;
  std::multimap<absl::Time, std::function<void()>> dropped;  // destroyed unlocked
  {
    absl::MutexLock lock(&state_->mu);
    state_->stopping = true;
    dropped.swap(state_->pending);
    state_->changed.Signal();
    thread = std::move(thread_);
  }
  if (!thread.joinable()) return;
  // The last owner may let go from a closure running on the timer's thread.
  if (thread.get_id() == std::this_thread::get_id()) {
    thread.detach();
  } else {
    thread.join();
  }
}

void DeadlineTimer::Schedule(absl::Time when, std::function<void()> fn) {
  absl::MutexLock lock(&state_->mu);
  state_->pending.emplace(when, std::move(fn));
  if (!thread_.joinable()) thread_ = std::thread(&DeadlineTimer::Loop, state_);
  state_->changed.Signal();
}

void DeadlineTimer::Loop(std::shared_ptr<State> state) {
  absl::MutexLock lock(&state->mu);
  while (!state->stopping) {
    if (state->pending.empty()) {
      state->changed.Wait(&state->mu);
      continue;
    }
    auto first = state->pending.begin();
    if (first->first > absl::Now()) {
      state->changed.WaitWithDeadline(&state->mu, first->first);
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    state->pending.erase(first);
    state->mu.Unlock();
    fn();
    fn = nullptr;  // drop what it holds before taking the lock again
    state->mu.Lock();
  }
}

absl::StatusOr<std::shared_ptr<DeadlineTimer>> DeviceTimer(ResourceMgr* rm) {
  absl::StatusOr<TimerResource*> r = rm->LookupOrCreate<TimerResource>(
      "", kTimerName, []() -> absl::StatusOr<std::unique_ptr<TimerResource>> {
        return std::make_unique<TimerResource>();
      });
  if (!r.ok()) return r.status();
  return (*r)->timer;
}

}  // namespace internal
}  // namespace sluice
