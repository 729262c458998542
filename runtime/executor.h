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
// Control flow (TensorFlow 1.x; ops by ControlFlowRole, graph/op_def.h):
// a frame is one while loop; its nodes run once per iteration, each
// iteration with its own inputs and pending counts. Enter leads a value from
// a frame into a child frame, NextIteration from one iteration to the next
// (the back edge of the loop's only cycle), Exit back to the parent frame.
// A dead tensor is the output a Switch does not take; a node with a dead
// input does not run and its outputs are dead, until a Merge (which takes
// its live input; dead only when all are), a NextIteration (dropped: the
// loop ends) or an Exit (dead in the loop's last iteration: its consumers
// get a dead input; otherwise dropped). A _Send forwards deadness to other
// partitions; fetching a dead tensor is InvalidArgument. Enter's attr
// parallel_iterations bounds the iterations of one frame alive at once:
// when that many are, the next starts only after the oldest has ended (no
// node of it ready or running, no inner loop started from it still live).
// For example, `i = 0; while i < 2: i = i + 1` (every node but Enter in the
// frame "loop"; Merge takes Enter, then NextIteration):
//
//   iteration 0: Merge(0) Less(0<2) Switch: Add(1) NextIteration(1); Exit dead
//   iteration 1: Merge(1) Less(1<2) Switch: Add(2) NextIteration(2); Exit dead
//   iteration 2: Merge(2) Less(2<2) Switch: Exit(2) -> root frame; Add dead,
//                NextIteration dead: no iteration 3, the frame ends.
//
// With parallel_iterations = 1, iteration 1 starts only after every node of
// iteration 0 (its Exit too) has run; with 10, a node of iteration 0 off
// the Merge-to-NextIteration path may still run while iteration 1 starts.
//
// Thread-safe: Run may be called concurrently (each call has its own state).
// The executor owns its graph and kernels; the device must outlive it.
// Inside: runtime/executor_layout.h (the graph laid out once),
// runtime/frame_propagator.h (frames and iterations of one step).
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
#include "runtime/stateful_kernels.h"
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

  // Builds every node's kernel (errors name the node). Nodes need not be
  // placed. The graph's only cycles are while loops closed by NextIteration;
  // another cycle, or a node with inputs from two frames, is InvalidArgument.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<Graph> graph,
                                                          Device* device,
                                                          const KernelRegistry& kernels);
  // The same, with the FunctionRuntime its kernels get (at construction and
  // in every OpKernelContext) to run the graph's library functions on
  // `device`; borrowed (null: none), it must outlive the executor.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<Graph> graph,
                                                          Device* device,
                                                          const KernelRegistry& kernels,
                                                          FunctionRuntime* function_runtime);
  // The same, with stateful nodes' kernels shared with the session's other
  // executors through `shared` (borrowed; null: none shared).
  static absl::StatusOr<std::unique_ptr<Executor>> Create(std::unique_ptr<Graph> graph,
                                                          Device* device,
                                                          const KernelRegistry& kernels,
                                                          FunctionRuntime* function_runtime,
                                                          StatefulKernels* shared);
  virtual ~Executor() = default;

  // Runs the step to completion (or first error); `done` is called once.
  virtual void RunAsync(const Args& args, std::function<void(absl::Status)> done) = 0;
  absl::Status Run(const Args& args);

  virtual const Graph& graph() const = 0;
  // The kernel the executor built for `node`, a node of graph().
  virtual const OpKernel* KernelOf(const Node& node) const = 0;
  // On a device with device memory: whether `node`'s kernel takes input
  // `input` in host memory (KernelDef::HostMemory, or a kernel that runs on
  // the host), so that a device value there is copied to the host first.
  // False on a device without device memory.
  virtual bool InputOnHost(const Node& node, int input) const = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_EXECUTOR_H_
