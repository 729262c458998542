// StepAccumulator<Sum>: what the gradient accumulators of synchronous
// training share (TensorFlow's ConditionalAccumulatorBase): a global step,
// gradients summed for it, and Takes that wait for enough of them. `Sum`
// holds the sum and says how to add to it and average it: dense tensors
// (gradient_accumulator.h) or IndexedSlices (sparse_gradient_accumulator.h).
//
// A gradient with local_step < global_step is stale: dropped, counted in
// stats().num_stale, and Apply still returns OK (a slow worker is no error).
// Takes wait first-come first-served; each completes once at least its
// num_required gradients are in: it gets their average (Sum::Average), the
// sum starts over and the global step goes up by one. A Take holds no
// thread while it waits; with a timeout it fails DeadlineExceeded when the
// timeout passes first (the gradients stay for the next Take). Destroying
// the accumulator fails the Takes still waiting with Aborted.
//
// Sum's interface:
//   Sum(DataType dtype, TensorShape shape);
//   using Partial = ...;                      the sum as Release hands it over
//   using Result = ...;                       what a Take receives
//   absl::Status Add(const std::string& accumulator, args...);  under the lock
//   Partial Release();                         the sum; empties it
//   void Clear();
//   static absl::StatusOr<Result> Average(Partial sum, int count);  no lock
//   static constexpr char kKind[];            "GradientAccumulator"
//
// Thread-safe. The caller owns it (a ResourceMgr, usually); `done` callbacks
// run on the thread that completes them (an Apply's, or the timer's), never
// under the accumulator's lock.
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_STEP_ACCUMULATOR_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_STEP_ACCUMULATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ops/data_flow/internal/async_wait.h"
#include "runtime/resource_mgr.h"

namespace sluice {
namespace internal {

template <typename Sum>
class StepAccumulator : public ResourceBase {
 public:
  using Result = typename Sum::Result;
  using TakeDone = std::function<void(absl::StatusOr<Result>)>;

  // `timer` serves Take timeouts (may be null when no Take uses one).
  StepAccumulator(std::string name, DataType dtype, TensorShape shape,
                  std::shared_ptr<DeadlineTimer> timer)
      : name_(std::move(name)),
        dtype_(dtype),
        shape_(shape),
        timer_(std::move(timer)),
        sum_(dtype, std::move(shape)) {}

  ~StepAccumulator() override {
    std::deque<PendingTake> takes;
    {
      absl::MutexLock lock(&mu_);
      takes.swap(takes_);
    }
    for (PendingTake& t : takes) {
      if (t.waiter->Claim()) {
        t.waiter->Complete(absl::AbortedError(
            absl::StrCat("accumulator '", name_, "' was destroyed while a take waited")));
      }
    }
  }

  std::string DebugString() const override {
    Stats s = stats();
    return absl::StrCat(Sum::kKind, " '", name_, "' (", DataTypeName(dtype()), " ",
                        shape().DebugString(), ", global step ", s.global_step, ", ",
                        s.num_accumulated, " accumulated)");
  }
  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }

  // Adds a gradient (Sum::Add's arguments) to this step's sum, or drops it
  // as stale. Sum::Add's errors (InvalidArgument naming the accumulator).
  template <typename... Args>
  absl::Status Apply(int64_t local_step, Args&&... gradient) {
    std::vector<Served> served;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) {
        ++num_stale_;
        return absl::OkStatus();
      }
      absl::Status added = sum_.Add(name_, std::forward<Args>(gradient)...);
      if (!added.ok()) return added;
      ++count_;
      Serve(&served);
    }
    Finish(std::move(served));
    return absl::OkStatus();
  }

  // Calls `done` with the average of this step's gradients once at least
  // `num_required` (>= 1) are in. A zero `timeout` waits without limit.
  void Take(int num_required, absl::Duration timeout, TakeDone done) {
    auto waiter = std::make_shared<Waiter<Result>>(std::move(done));
    std::vector<Served> served;
    {
      absl::MutexLock lock(&mu_);
      // Takes that timed out leave their entries behind; drop them here too.
      while (!takes_.empty() && takes_.front().waiter->claimed()) takes_.pop_front();
      takes_.push_back({waiter, num_required});
      Serve(&served);
    }
    Finish(std::move(served));
    if (timeout <= absl::ZeroDuration() || waiter->claimed()) return;
    if (timer_ == nullptr) {
      if (waiter->Claim()) {
        waiter->Complete(absl::InternalError(
            absl::StrCat("accumulator '", name_, "' has no timer for a take with a timeout")));
      }
      return;
    }
    std::string message =
        absl::StrCat("timed out after ", absl::FormatDuration(timeout), " waiting for ",
                     num_required, " gradients in accumulator '", name_, "'");
    timer_->Schedule(absl::Now() + timeout, [waiter, message = std::move(message)] {
      if (waiter->Claim()) waiter->Complete(absl::DeadlineExceededError(message));
    });
  }

  // Moves the global step (the chief, after restoring a checkpoint).
  // Gradients accumulated for the old step are dropped as stale when it
  // changes.
  void SetGlobalStep(int64_t step) {
    absl::MutexLock lock(&mu_);
    if (step == global_step_) return;
    num_stale_ += count_;
    count_ = 0;
    sum_.Clear();
    global_step_ = step;
  }

  struct Stats {
    int64_t global_step = 0;
    int num_accumulated = 0;  // gradients in the current sum
    int64_t num_stale = 0;    // dropped since creation
    int64_t num_taken = 0;    // completed Takes
  };
  Stats stats() const {
    absl::MutexLock lock(&mu_);
    return {global_step_, count_, num_stale_, num_taken_};
  }

 private:
  struct PendingTake {
    std::shared_ptr<Waiter<Result>> waiter;
    int num_required;
  };
  struct Served {
    std::shared_ptr<Waiter<Result>> waiter;
    typename Sum::Partial sum;
    int count;
  };

  // Completes what the current sum satisfies; the caller completes the
  // returned takes (Finish) after unlocking.
  void Serve(std::vector<Served>* served) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (!takes_.empty()) {
      PendingTake& front = takes_.front();
      if (front.waiter->claimed()) {  // timed out
        takes_.pop_front();
        continue;
      }
      if (count_ < front.num_required) return;
      std::shared_ptr<Waiter<Result>> waiter = std::move(front.waiter);
      takes_.pop_front();
      if (!waiter->Claim()) continue;  // its deadline won the race
      served->push_back({std::move(waiter), sum_.Release(), count_});
      count_ = 0;
      ++global_step_;
      ++num_taken_;
    }
  }

  static void Finish(std::vector<Served> served) {
    for (Served& s : served) s.waiter->Complete(Sum::Average(std::move(s.sum), s.count));
  }

  const std::string name_;
  const DataType dtype_;
  const TensorShape shape_;
  const std::shared_ptr<DeadlineTimer> timer_;

  mutable absl::Mutex mu_;
  Sum sum_ ABSL_GUARDED_BY(mu_);
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_stale_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_taken_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<PendingTake> takes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_STEP_ACCUMULATOR_H_
