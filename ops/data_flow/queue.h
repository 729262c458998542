// Queue: the resource behind TensorFlow 1.x input-pipeline queues
// (FIFOQueueV2, RandomShuffleQueueV2; ops in ops/data_flow/queue_ops.h). It holds
// tuples of tensors and serves blocking enqueues and dequeues by callback,
// so that kernels waiting on it hold no thread.
//
//   Queue q({.kind = Queue::Kind::kFifo, .name = "_0_q", .types = {DT_FLOAT}, .capacity = 2});
//   auto cancel = q.Enqueue({{Tensor::Scalar<float>(1)}}, [](absl::Status s) { ... });
//   q.Dequeue(1, [](absl::StatusOr<std::vector<Queue::Tuple>> r) { ... });
//   cancel(absl::DeadlineExceededError("step aborted"));  // no-op once served
//
// Semantics (TensorFlow's):
//  - Enqueue(tuples) appends them one by one while the queue is below
//    capacity (-1: unbounded) and completes when all are in; on a closed
//    queue it fails Cancelled "<Kind> '<name>' is closed.".
//  - Dequeue(n) completes with n tuples once that many can be taken: FIFO
//    takes the oldest; RandomShuffle takes uniformly random ones and, until
//    the queue is closed, only while min_after_dequeue would remain. Requests
//    are served in arrival order. On a closed queue with too few elements it
//    fails OutOfRange "<Kind> '<name>' is closed and has insufficient elements
//    (requested n, current size m)".
//  - Close(cancel_pending_enqueues) wakes the waiting dequeues (served or
//    OutOfRange); with cancel_pending_enqueues waiting enqueues fail
//    Cancelled, else they still complete as room frees.
//  - The cancel function an Enqueue/Dequeue returns completes a still
//    waiting request with the given status (a step abort); elements an
//    EnqueueMany already added stay.
//  - Destroying the queue fails every waiting request with Cancelled.
// Thread-safe; callbacks run outside the queue's lock, on the thread that
// made them ready. Ownership: the ResourceMgr owns queues; tuples share
// their tensors' buffers.
#ifndef SLUICE_OPS_DATA_FLOW_QUEUE_H_
#define SLUICE_OPS_DATA_FLOW_QUEUE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "ops/data_flow/internal/async_wait.h"
#include "runtime/resource_mgr.h"
#include "runtime/tensor.h"

namespace sluice {

class Queue : public ResourceBase {
 public:
  using Tuple = std::vector<Tensor>;
  using EnqueueDone = std::function<void(absl::Status)>;
  using DequeueDone = std::function<void(absl::StatusOr<std::vector<Tuple>>)>;
  using Cancel = std::function<void(absl::Status)>;

  enum class Kind { kFifo, kRandomShuffle };
  struct Options {
    Kind kind = Kind::kFifo;
    std::string name;
    std::vector<DataType> types;
    std::vector<TensorShape> shapes;  // empty, or one (possibly partial) per component
    int64_t capacity = -1;            // -1: unbounded
    int64_t min_after_dequeue = 0;    // RandomShuffle only
    uint64_t seed = 0;                // RandomShuffle; 0 and seed2 0: nondeterministic
    uint64_t seed2 = 0;
  };

  explicit Queue(Options options);
  ~Queue() override;

  std::string DebugString() const override;
  const Options& options() const { return options_; }

  // InvalidArgument unless `t` has the component types and shapes.
  absl::Status CheckTuple(const Tuple& t) const;

  Cancel Enqueue(std::vector<Tuple> tuples, EnqueueDone done);
  Cancel Dequeue(int64_t n, DequeueDone done);
  void Close(bool cancel_pending_enqueues);
  bool is_closed() const;
  int64_t size() const;

 private:
  struct EnqueueRequest {
    std::deque<Tuple> tuples;
    std::shared_ptr<internal::Waiter<bool>> waiter;
  };
  struct DequeueRequest {
    int64_t n;
    std::shared_ptr<internal::Waiter<std::vector<Tuple>>> waiter;
  };
  using Ready = std::vector<std::function<void()>>;

  const char* KindName() const;
  // Serves waiting requests as far as possible; fills `ready` with the
  // completions to run after unlocking.
  void ServeLocked(Ready* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ServeEnqueuesLocked(Ready* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ServeDequeuesLocked(Ready* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Tuple TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Tuple> elements_ ABSL_GUARDED_BY(mu_);
  std::deque<EnqueueRequest> enqueues_ ABSL_GUARDED_BY(mu_);
  std::deque<DequeueRequest> dequeues_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
};

// The queue a DT_RESOURCE handle names in `rm`: the handle is
// "<container>\x1f<name>", as the queue ops (queue_ops.h) write it.
// InvalidArgument for a tensor that is no such handle; NotFound naming the
// queue and `device` when the ResourceMgr has none by that name. The reader
// ops (ops/io/reader_ops.h) take their file names from queues this way.
absl::StatusOr<Queue*> LookupQueue(ResourceMgr* rm, const Tensor& handle,
                                   absl::string_view device);

}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_QUEUE_H_
