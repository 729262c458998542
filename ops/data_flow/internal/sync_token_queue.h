// SyncTokenQueue: the resource behind SyncTokenEnqueue / SyncTokenDequeue
// (ops/data_flow/data_flow_ops.h) — a FIFO of int64 tokens (global steps) that
// synchronous-training workers take one at a time to learn their next step.
//
//   SyncTokenQueue q("sync_token_q", timer);
//   q.Dequeue(absl::ZeroDuration(), [](absl::StatusOr<int64_t> t) { ... });  // waits
//   q.Enqueue({7, 7});   // completes the waiting dequeue with 7; one 7 stays
//
// Dequeues wait first-come first-served, holding no thread; with a timeout
// one fails DeadlineExceeded when it passes first. Destroying the queue fails
// the dequeues still waiting with Aborted.
//
// Thread-safe. `done` callbacks run on the completing thread (an Enqueue's,
// or the timer's), never under the queue's lock.
#ifndef SLUICE_OPS_DATA_FLOW_INTERNAL_SYNC_TOKEN_QUEUE_H_
#define SLUICE_OPS_DATA_FLOW_INTERNAL_SYNC_TOKEN_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "ops/data_flow/internal/async_wait.h"
#include "runtime/resource_mgr.h"

namespace sluice {
namespace internal {

class SyncTokenQueue : public ResourceBase {
 public:
  using DequeueDone = std::function<void(absl::StatusOr<int64_t>)>;

  // `timer` serves dequeue timeouts (may be null when none uses one).
  SyncTokenQueue(std::string name, std::shared_ptr<DeadlineTimer> timer);
  ~SyncTokenQueue() override;

  std::string DebugString() const override;

  void Enqueue(absl::Span<const int64_t> tokens);
  // Calls `done` with the oldest token once there is one. A zero `timeout`
  // waits without limit.
  void Dequeue(absl::Duration timeout, DequeueDone done);
  size_t size() const;

 private:
  using Served = std::pair<std::shared_ptr<Waiter<int64_t>>, int64_t>;
  void Serve(std::vector<Served>* served) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const std::shared_ptr<DeadlineTimer> timer_;

  mutable absl::Mutex mu_;
  std::deque<int64_t> tokens_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<Waiter<int64_t>>> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_INTERNAL_SYNC_TOKEN_QUEUE_H_
