// TensorFlow 1.x input-pipeline queue ops on resource handles: FIFOQueueV2,
// RandomShuffleQueueV2, QueueEnqueueV2, QueueEnqueueManyV2, QueueDequeueV2,
// QueueDequeueManyV2, QueueCloseV2, QueueSizeV2, QueueIsClosedV2 (TensorFlow's names, inputs
// and attrs), with CPU kernels and wrappers. The queue itself is
// ops/data_flow/queue.h; it lives in the device's ResourceMgr under shared_name, else
// "_<n>_<node name>" (as TensorFlow names a private queue, e.g. "_0_q").
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   Output q = ops::FIFOQueueV2(s.WithOpName("q"), {DT_FLOAT}, {.capacity = 10});
//   Node* enq = ops::QueueEnqueueV2(s, q, {x});
//   std::vector<Output> y = ops::QueueDequeueV2(s, q, {DT_FLOAT});
//   Node* close = ops::QueueCloseV2(s, q);
//
// Blocking: enqueue ops wait while the queue is full, dequeue ops until
// enough elements are there; both are asynchronous kernels (they hold no
// executor thread) and end when the step is aborted — a RunOptions timeout
// gives DeadlineExceeded. Closing: see ops/data_flow/queue.h (enqueue on a closed
// queue is Cancelled; a dequeue that can no longer be served is OutOfRange
// "FIFOQueue '_0_q' is closed and has insufficient elements (requested 1,
// current size 0)"). QueueDequeueManyV2 stacks n elements along a new first
// dimension; QueueEnqueueManyV2 splits its components along the first.
// RandomShuffleQueueV2 draws with its own generator seeded from seed/seed2
// (not TensorFlow's Philox sequence).
//
// Errors: NotFound for a handle naming no queue on this device;
// InvalidArgument for components of the wrong types or shapes, or an
// EnqueueMany whose components differ in their first dimension, or n < 0.
// Limits: the abort watch uses the step's rendezvous, which a local step has
// only with a RunOptions timeout or several partitions; without one a
// dequeue waits until it is served or the queue is closed.
// Thread-safety: kernels are thread-safe; graph building is thread-compatible.
// Ownership: the ResourceMgr owns queues.
#ifndef SLUICE_OPS_DATA_FLOW_QUEUE_OPS_H_
#define SLUICE_OPS_DATA_FLOW_QUEUE_OPS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/source_location.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterQueueOps(OpRegistry* ops);
void RegisterQueueKernels(KernelRegistry* kernels);

namespace ops {

struct QueueAttrs {
  std::vector<TensorShape> shapes;  // empty: any shapes
  int64_t capacity = -1;            // -1: unbounded
  std::string container;
  std::string shared_name;
};
Output FIFOQueueV2(const Scope& scope, const std::vector<DataType>& component_types,
                   const QueueAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());

struct RandomShuffleQueueAttrs {
  std::vector<TensorShape> shapes;
  int64_t capacity = -1;
  int64_t min_after_dequeue = 0;
  int64_t seed = 0;
  int64_t seed2 = 0;
  std::string container;
  std::string shared_name;
};
Output RandomShuffleQueueV2(const Scope& scope, const std::vector<DataType>& component_types,
                            const RandomShuffleQueueAttrs& attrs = {},
                            std::source_location loc = std::source_location::current());

Node* QueueEnqueueV2(const Scope& scope, Input handle, absl::Span<const Output> components,
                     std::source_location loc = std::source_location::current());
Node* QueueEnqueueManyV2(const Scope& scope, Input handle, absl::Span<const Output> components,
                         std::source_location loc = std::source_location::current());
std::vector<Output> QueueDequeueV2(const Scope& scope, Input handle,
                                   const std::vector<DataType>& component_types,
                                   std::source_location loc = std::source_location::current());
std::vector<Output> QueueDequeueManyV2(const Scope& scope, Input handle, Input n,
                                       const std::vector<DataType>& component_types,
                                       std::source_location loc = std::source_location::current());
struct QueueCloseAttrs {
  bool cancel_pending_enqueues = false;
};
Node* QueueCloseV2(const Scope& scope, Input handle, const QueueCloseAttrs& attrs = {},
                   std::source_location loc = std::source_location::current());
Output QueueSizeV2(const Scope& scope, Input handle,
                   std::source_location loc = std::source_location::current());
// A bool scalar: whether the queue has been closed (it may still hold elements).
Output QueueIsClosedV2(const Scope& scope, Input handle,
                       std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_QUEUE_OPS_H_
