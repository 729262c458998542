// Waiting for a resource without holding a thread, for asynchronous kernels
// (AccumulatorTakeGradient, SyncTokenDequeue):
//  - Waiter<R>: a one-shot callback that several parties race to complete —
//    the resource when it can serve it, a deadline, the resource's destructor.
//    Exactly one Claim() wins; the winner calls Complete().
//  - DeadlineTimer: runs closures at given times on one thread of its own,
//    started by the first Schedule.
//  - DeviceTimer(rm): the one DeadlineTimer of a device, kept in its
//    ResourceMgr and shared by the resources that need deadlines.
//
//   auto w = std::make_shared<Waiter<int64_t>>(std::move(done));
//   queue_.push_back(w);                                  // served later: if (w->Claim())
//   w->Complete(v); timer->Schedule(absl::Now() + timeout, [w] {
//     if (w->Claim()) w->Complete(absl::DeadlineExceededError("..."));
//   });
//
// A scheduled closure should hold only what it completes (a shared_ptr to the
// Waiter), never the resource: it may run after the resource is gone.
// Thread-safe. Internal to ops/.
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_ASYNC_WAIT_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_ASYNC_WAIT_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "runtime/resource_mgr.h"

namespace sluice {
namespace internal {

template <typename R>
class Waiter {
 public:
  using Done = std::function<void(absl::StatusOr<R>)>;
  explicit Waiter(Done done) : done_(std::move(done)) {}
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // True for exactly one caller: the one that must call Complete.
  bool Claim() { return !claimed_.exchange(true, std::memory_order_acq_rel); }
  bool claimed() const { return claimed_.load(std::memory_order_acquire); }
  // Only after a winning Claim(); calls `done` and releases it.
  void Complete(absl::StatusOr<R> result) {
    Done done = std::move(done_);
    done_ = nullptr;
    done(std::move(result));
  }

 private:
  std::atomic<bool> claimed_{false};
  Done done_;
};

class DeadlineTimer {
 public:
  DeadlineTimer() = default;
  // Stops and joins the thread; closures not run yet are dropped.
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Runs `fn` on the timer's thread at `when` (at once when it has passed).
  // Closures run one at a time, so they should be quick.
  void Schedule(absl::Time when, std::function<void()> fn);

 private:
  // Shared with the thread, which may outlive the timer when the timer's
  // last owner lets go from a closure running on that thread.
  struct State {
    absl::Mutex mu;
    absl::CondVar changed;
    std::multimap<absl::Time, std::function<void()>> pending ABSL_GUARDED_BY(mu);
    bool stopping ABSL_GUARDED_BY(mu) = false;
  };
  static void Loop(std::shared_ptr<State> state);

  const std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread thread_ ABSL_GUARDED_BY(state_->mu);
};

// The device's timer (created on first use, stored in `rm` as a resource).
// Holders of the shared_ptr keep it alive after the ResourceMgr drops it.
absl::StatusOr<std::shared_ptr<DeadlineTimer>> DeviceTimer(ResourceMgr* rm);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_ASYNC_WAIT_H_
