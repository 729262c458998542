// Data-flow ops for synchronous between-graph training: gradient
// accumulators and a token queue, shared by the workers' and the chief's
// graphs through the ResourceMgr of the device they are placed on.
//
//   Scope s = Scope::NewRootScope(BuiltinOps());
//   ops::VariableAndInit w = ops::VariableWithInit(s.WithOpName("w"), {0.0f, 0.0f});
//   ops::AccumulatorSpec acc{.dtype = DT_FLOAT, .shape = {2}, .shared_name = "w/grad_accum"};
//   Scope on_w = s.ColocateWith(w.var);
//   Output step = ops::Placeholder(s.WithOpName("local_step"), DT_INT64);
//   Node* apply = ops::AccumulatorApplyGradient(on_w, acc, step, grad);      // workers
//   Output avg = ops::AccumulatorTakeGradient(on_w, acc, 2);                 // chief: waits
//   ops::SyncTokenQueueSpec q{.shared_name = "sync_token_q"};
//   Node* put = ops::SyncTokenEnqueue(on_w, q, tokens);                      // int64 [N]
//   Output token = ops::SyncTokenDequeue(on_w, q);                           // waits
//
// Resources are found by (container, shared_name) in the ResourceMgr of the
// device the op runs on and created by whichever op touches them first, so
// every op naming one accumulator or queue must be placed on the same device:
// colocate them (Scope::ColocateWith the variable they serve).
//
// Accumulators (attrs dtype {float, double}, shape, container, shared_name):
//   AccumulatorApplyGradient(local_step: int64, gradient: dtype)
//       adds the gradient to the sum of the accumulator's current global step
//       (starting at 0); one with local_step < global step is stale: dropped
//       (no error) and counted (AccumulatorNumStale).
//   AccumulatorTakeGradient(num_required: int32) -> average: dtype
//       [attr timeout_ms: int = 0] asynchronous: completes once at least
//       num_required gradients are in, with their average; resets the sum and
//       increments the global step. Takes are served in arrival order and hold
//       no thread while waiting. There is no way to cancel a waiting take (a
//       step has no cancellation): it ends when served, when timeout_ms > 0
//       passes (DeadlineExceeded; the gradients stay for the next take), or
//       Aborted when its accumulator is destroyed (ResourceMgr::ClearContainer).
//   AccumulatorSetGlobalStep(new_global_step: int64)
//       the chief after a restore; gradients summed for another step are
//       dropped as stale when the step changes.
//   AccumulatorNumAccumulated() -> int32   gradients in the current sum
//   AccumulatorNumStale() -> int64         stale gradients dropped so far
// Token queue (attrs container, shared_name):
//   SyncTokenEnqueue(tokens: int64 [N])    appends N tokens
//   SyncTokenDequeue() -> int64            [attr timeout_ms: int = 0]
//       asynchronous: the oldest token, once there is one (first come, first
//       served; same ending rules as a take).
//
// Errors: InvalidArgument at build time for an empty shared_name or shapes
// that do not fit (gradient vs. shape attr, non-scalar steps, tokens not a
// vector); at run time for a gradient of another dtype or shape than the
// accumulator's, num_required < 1, and for ops disagreeing on an
// accumulator's dtype or shape; DeadlineExceeded as above.
//
// Thread-safety: graph building is thread-compatible; kernels are
// thread-safe. Ownership: the Graph owns nodes; the device's ResourceMgr owns
// accumulators and queues (they live until it is destroyed or cleared).
// Destroy a session only after its runs have returned: a take or dequeue
// still waiting then is never completed.
#ifndef SLUICE_OPS_DATA_FLOW_DATA_FLOW_OPS_H_
#define SLUICE_OPS_DATA_FLOW_DATA_FLOW_OPS_H_

#include <cstdint>
#include "base/source_location.h"
#include <string>

#include "absl/status/status.h"
#include "graph/op_registry.h"
#include "graph/scope.h"
#include "runtime/kernel_registry.h"

namespace sluice {

absl::Status RegisterDataFlowOps(OpRegistry* ops);
void RegisterDataFlowKernels(KernelRegistry* kernels);

namespace ops {

// Which accumulator an op touches. Every op on one accumulator must agree on
// dtype and shape.
struct AccumulatorSpec {
  DataType dtype = DT_FLOAT;
  TensorShape shape = TensorShape::Unknown();
  std::string shared_name;  // required
  std::string container;    // "" : the default container
  // A sparse accumulator (the SparseAccumulator* ops): AccumulatorSetGlobalStep
  // and the count ops then address it (their attr sparse = true).
  bool sparse = false;
};

Node* AccumulatorApplyGradient(const Scope& scope, const AccumulatorSpec& spec, Input local_step,
                               Input gradient,
                               std::source_location loc = std::source_location::current());
// timeout_ms 0: wait without limit.
Output AccumulatorTakeGradient(const Scope& scope, const AccumulatorSpec& spec, Input num_required,
                               int64_t timeout_ms = 0,
                               std::source_location loc = std::source_location::current());
// The sparse accumulator (TensorFlow's SparseConditionalAccumulator): an
// IndexedSlices gradient in (indices int64 [n], values [n, ...], dense shape
// int64), the per-row average of the rows the step's gradients touched out
// (indices sorted and distinct). AccumulatorSetGlobalStep and the count ops
// serve a sparse accumulator when its spec says `sparse`.
Node* SparseAccumulatorApplyGradient(const Scope& scope, const AccumulatorSpec& spec,
                                     Input local_step, Input indices, Input values,
                                     Input dense_shape,
                                     std::source_location loc = std::source_location::current());
struct SparseAccumulatorTakeOutputs {
  Output indices;
  Output values;
  Output dense_shape;
};
SparseAccumulatorTakeOutputs SparseAccumulatorTakeGradient(
    const Scope& scope, const AccumulatorSpec& spec, Input num_required, int64_t timeout_ms = 0,
    std::source_location loc = std::source_location::current());
Node* AccumulatorSetGlobalStep(const Scope& scope, const AccumulatorSpec& spec,
                               Input new_global_step,
                               std::source_location loc = std::source_location::current());
Output AccumulatorNumAccumulated(const Scope& scope, const AccumulatorSpec& spec,
                                 std::source_location loc = std::source_location::current());
Output AccumulatorNumStale(const Scope& scope, const AccumulatorSpec& spec,
                           std::source_location loc = std::source_location::current());

struct SyncTokenQueueSpec {
  std::string shared_name;  // required
  std::string container;    // "" : the default container
};

Node* SyncTokenEnqueue(const Scope& scope, const SyncTokenQueueSpec& spec, Input tokens,
                       std::source_location loc = std::source_location::current());
// timeout_ms 0: wait without limit.
Output SyncTokenDequeue(const Scope& scope, const SyncTokenQueueSpec& spec, int64_t timeout_ms = 0,
                        std::source_location loc = std::source_location::current());

}  // namespace ops
}  // namespace sluice

#endif  // SLUICE_OPS_DATA_FLOW_DATA_FLOW_OPS_H_
