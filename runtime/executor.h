// Executor: runs one graph (a partition placed on one device) for a step.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<Executor> ex,
//                    Executor::Create(std::move(graph), device, kernels));
//   CallFrame frame;  frame.args = {x};  frame.retvals.resize(1);
//   RETURN_IF_ERROR(ex->Run({.step_id = 1, .call_frame = &frame}));
//
// Dataflow: each node waits on a pending count of its in-edges; ready cheap
// nodes run inline, expensive ones go to the device's pool (independent nodes
// run in parallel); a tensor is released when its last consumer has run; the
// first error stops the step and names the node. Asynchronous kernels (a
// _Recv waiting for another partition) hold no thread while they wait; their
// consumers continue on the device's pool.
//
// Thread-safe: Run may be called concurrently (each call has its own state).
// The executor owns its graph and kernels; the device must outlive it.
#ifndef SLUICE_RUNTIME_EXECUTOR_H_
#define SLUICE_RUNTIME_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/rendezvous.h"
#include "runtime/step_stats.h"

namespace sluice {

class CollectiveExecutor;  // runtime/collective/collective_executor.h

class Executor {
 public:
  struct Args {
    int64_t step_id = 0;
    CallFrame* call_frame = nullptr;
    StepStatsCollector* stats = nullptr;  // optional
    // Run every node in the calling thread, one at a time (no inter-op
    // parallelism). Best when single kernels already use every core.
    bool run_inline = false;
    // Where this partition's _Send/_Recv kernels meet the step's other
    // partitions. The first error of this run aborts it, so that the other
    // partitions stop instead of waiting for tensors that will not come.
    Rendezvous* rendezvous = nullptr;
    // Runs the step's collective ops (runtime/collective); nullptr: a
    // collective op fails with FailedPrecondition.
    CollectiveExecutor* collective_executor = nullptr;
    // On a device with device memory: fetched values (_Retval inputs) stay
    // in device memory instead of being copied to the host (a captured step
    // copies them out after each replay; runtime/step_replay.h).
    bool retvals_on_device = false;
  };

  // Builds every node's kernel (errors name the node). The graph must be
  // acyclic; nodes need not be placed.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<Graph> graph,
                                                          Device* device,
                                                          const KernelRegistry& kernels);
  virtual ~Executor() = default;

  // Runs the step to completion (or first error); `done` is called once.
  virtual void RunAsync(const Args& args, std::function<void(absl::Status)> done) = 0;
  absl::Status Run(const Args& args);

  virtual const Graph& graph() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_EXECUTOR_H_
