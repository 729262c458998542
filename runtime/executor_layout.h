// ExecutorLayout: what the executor knows about one graph before any step
// runs (TensorFlow's ImmutableExecutorState). Each node becomes a NodeItem:
// its kernel, how the run loop treats it (cheap or expensive, synchronous or
// asynchronous, where its inputs live), its out-edges resolved to the
// consumers' input slots, and its place in a static frame (the root frame or
// one while loop; graph/control_flow_info.h). Each frame gets a FrameLayout:
// how many input slots one of its iterations holds and every node's initial
// pending count, so that starting an iteration is one allocation and a copy.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<const ExecutorLayout> layout,
//                    ExecutorLayout::Create(std::move(graph), device, kernels));
//   const NodeItem& item = layout->item(id);
//   const FrameLayout& frame = layout->frame(item.frame);
//
// Internal to the executor (runtime/executor.cc and runtime/frame_propagator.h);
// everyone else uses runtime/executor.h.
//
// Thread-safety: immutable after Create, so any number of steps read it at
// once (a kernel's Compute is itself safe to call concurrently).
// Ownership: the layout owns the graph and every kernel; the device is
// borrowed and must outlive it.
#ifndef SLUICE_RUNTIME_EXECUTOR_LAYOUT_H_
#define SLUICE_RUNTIME_EXECUTOR_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/control_flow_info.h"
#include "graph/graph.h"
#include "runtime/device.h"
#include "runtime/kernel.h"
#include "runtime/kernel_registry.h"
#include "runtime/stateful_kernels.h"

namespace sluice {
namespace internal {

// One outgoing edge, resolved to the consumer's item and input slot.
struct OutEdge {
  int dst_item;
  int dst_slot;    // index into the consumer's frame's input slots; -1 for control
  int src_output;  // -1 for control
};

// How the frame propagator treats a node's outputs (graph/op_def.h's
// ControlFlowRole). Switch is kNormal: the output it does not set is dead.
enum class ItemKind : uint8_t { kNormal, kMerge, kEnter, kExit, kNextIteration, kControlTrigger };

// Everything about a node a step needs, laid out once.
struct NodeItem {
  const Node* node = nullptr;
  std::shared_ptr<OpKernel> kernel;  // shared across executors when stateful
  ItemKind kind = ItemKind::kNormal;
  bool expensive = true;
  bool is_async = false;
  bool allows_uninitialized_input = false;
  // An output the kernel leaves unset is dead (Switch), not an error.
  bool may_leave_outputs_unset = false;
  int frame = 0;        // the static frame the node runs in
  int local_id = 0;     // index into its frame's per-iteration counters
  int input_start = 0;  // first input slot, in its frame's slots
  int num_inputs = 0;
  int num_outputs = 0;
  int pending_init = 0;  // in-edges; for a Merge its control in-edges
  int child_frame = -1;  // an Enter: the frame it leads into
  bool is_constant_enter = false;
  std::vector<bool> input_is_ref;
  // Per input: a variable arriving here is read when this node runs, because
  // this node is ordered after an update of that variable (a data or control
  // path leads from a node taking the same variable by reference). Other
  // reads take the value when the variable's node hands it over.
  std::vector<bool> read_when_run;
  std::vector<OutEdge> out_edges;
  // The outputs with a data consumer, each once: those a kernel must set
  // (unless may_leave_outputs_unset).
  std::vector<int> consumed_outputs;
  // On a device with device memory: per input / output, 1 where the kernel
  // wants host memory (KernelDef::HostMemory). Empty elsewhere.
  std::vector<uint8_t> input_on_host;
  std::vector<uint8_t> output_on_host;
  // On a device with device memory: the kernel runs on the host
  // (KernelDef::AllHostMemory), so its temporaries are host memory too.
  bool host_kernel = false;
  // A _Retval: with Executor::Args::retvals_on_device its input stays where it is.
  bool is_retval = false;
  bool is_send = false;
};

// A static frame's layout: its nodes' input slots and initial pending counts.
struct FrameLayout {
  FrameInfo info;
  int num_slots = 0;
  std::vector<int> pending_init;  // by local id
  // The graph has control flow (or a _Recv, which may receive a dead tensor):
  // iterations count dead inputs. Without it nothing is ever dead, and a step
  // allocates no dead counts.
  bool track_dead = false;
};

class ExecutorLayout {
 public:
  // Builds every node's kernel and lays the graph out. Errors name the node:
  // no kernel (NotFound), an input not connected (InvalidArgument), a bad
  // kernel attr, frames that do not nest (graph/control_flow_info.h). The
  // graph may hold cycles only through NextIteration.
  // `function_runtime` (may be null, borrowed) is what the kernels get as
  // OpKernelConstruction::function_runtime(). `shared` (may be null,
  // borrowed) gives stateful nodes the kernels other executors of the
  // session made for them (runtime/stateful_kernels.h).
  static absl::StatusOr<std::unique_ptr<const ExecutorLayout>> Create(
      std::unique_ptr<Graph> graph, Device* device, const KernelRegistry& kernels,
      FunctionRuntime* function_runtime = nullptr, StatefulKernels* shared = nullptr);
  ExecutorLayout(const ExecutorLayout&) = delete;
  ExecutorLayout& operator=(const ExecutorLayout&) = delete;

  const Graph& graph() const { return *graph_; }
  Device* device() const { return device_; }
  FunctionRuntime* function_runtime() const { return function_runtime_; }
  // Items are numbered in topological order (NextIteration back-edges aside).
  const NodeItem& item(int id) const { return items_[id]; }
  // The item of `node`, a node of graph().
  int item_of(const Node& node) const { return item_of_[node.id()]; }
  int num_items() const { return static_cast<int>(items_.size()); }
  // frame(0) is the root frame.
  const FrameLayout& frame(int f) const { return frames_[f]; }
  int num_frames() const { return static_cast<int>(frames_.size()); }
  // The nodes without in-edges (all in the root frame): a step starts there.
  absl::Span<const int> roots() const { return roots_; }

 private:
  ExecutorLayout(std::unique_ptr<Graph> graph, Device* device, FunctionRuntime* function_runtime)
      : graph_(std::move(graph)), device_(device), function_runtime_(function_runtime) {}

  absl::Status Initialize(const KernelRegistry& kernels, StatefulKernels* shared);
  absl::Status InitializeFrames(absl::Span<Node* const> order, const std::vector<int>& item_of);
  // Fills every item's read_when_run.
  void MarkReadsOrderedAfterUpdates(const std::vector<int>& item_of);

  std::unique_ptr<Graph> graph_;
  Device* const device_;
  FunctionRuntime* const function_runtime_;
  std::vector<NodeItem> items_;
  std::vector<int> item_of_;  // by node id
  std::vector<FrameLayout> frames_;
  std::vector<int> roots_;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_EXECUTOR_LAYOUT_H_
