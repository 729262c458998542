// GradientAccumulator: the resource behind the Accumulator* ops
// (ops/data_flow/data_flow_ops.h) — sums the gradients workers apply for the current
// global step and hands their average to the chief.
//
//   GradientAccumulator acc("w/grad_accum", DT_FLOAT, TensorShape({2}), timer);
//   RETURN_IF_ERROR(acc.Apply(/*local_step=*/0, grad, allocator));  // 1 of 2
//   acc.Take(2, absl::Seconds(10), [](absl::StatusOr<Tensor> avg) { ... });
//   RETURN_IF_ERROR(acc.Apply(0, grad2, allocator));  // completes the Take:
//                                                      // avg = (grad + grad2) / 2,
//                                                      // global step 0 -> 1
//
// A gradient with local_step < global_step is stale: dropped, counted in
// stats().num_stale, and Apply still returns OK (a slow worker is no error).
// Takes wait first-come first-served; each completes once at least its
// num_required gradients are in: it gets their average (the sum divided by
// their count, in the accumulator's dtype), the sum starts over and the
// global step goes up by one. A Take holds no thread while it waits; with a
// timeout it fails DeadlineExceeded when the timeout passes first (the
// gradients stay for the next Take). Destroying the accumulator fails the
// Takes still waiting with Aborted.
//
// Thread-safe. The caller owns it (a ResourceMgr, usually); `done` callbacks
// run on the thread that completes them (an Apply's, or the timer's), never
// under the accumulator's lock.
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "ops/data_flow/internal/async_wait.h"
#include "runtime/allocator.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {
namespace internal {

class GradientAccumulator : public ResourceBase {
 public:
  using TakeDone = std::function<void(absl::StatusOr<Tensor>)>;

  // `dtype` is DT_FLOAT or DT_DOUBLE; `shape` may be partly unknown. `timer`
  // serves Take timeouts (may be null when no Take uses one).
  GradientAccumulator(std::string name, DataType dtype, TensorShape shape,
                      std::shared_ptr<DeadlineTimer> timer);
  ~GradientAccumulator() override;

  std::string DebugString() const override;
  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }

  // Adds `gradient` to this step's sum, or drops it as stale. InvalidArgument
  // (naming the accumulator and both shapes/dtypes) when its dtype differs or
  // its shape does not fit the declared shape or this step's earlier ones;
  // ResourceExhausted when the sum cannot be allocated.
  absl::Status Apply(int64_t local_step, const Tensor& gradient, Allocator* allocator);

  // Calls `done` with the average of this step's gradients once at least
  // `num_required` (>= 1) are in. A zero `timeout` waits without limit.
  void Take(int num_required, absl::Duration timeout, TakeDone done);

  // Moves the global step (the chief, after restoring a checkpoint).
  // Gradients accumulated for the old step are dropped as stale when it
  // changes.
  void SetGlobalStep(int64_t step);

  struct Stats {
    int64_t global_step = 0;
    int num_accumulated = 0;  // gradients in the current sum
    int64_t num_stale = 0;    // dropped since creation
    int64_t num_taken = 0;    // completed Takes
  };
  Stats stats() const;

 private:
  struct PendingTake {
    std::shared_ptr<Waiter<Tensor>> waiter;
    int num_required;
  };
  struct Served {
    std::shared_ptr<Waiter<Tensor>> waiter;
    Tensor sum;
    int count;
  };
  // Completes what the current sum satisfies; the caller completes the
  // returned takes (Finish) after unlocking.
  void Serve(std::vector<Served>* served) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Finish(std::vector<Served> served);

  const std::string name_;
  const DataType dtype_;
  const TensorShape shape_;
  const std::shared_ptr<DeadlineTimer> timer_;

  mutable absl::Mutex mu_;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  Tensor sum_ ABSL_GUARDED_BY(mu_);  // uninitialized while count_ == 0
  int count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_stale_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t num_taken_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<PendingTake> takes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_GRADIENT_ACCUMULATOR_H_
