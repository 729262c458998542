#include "runtime/executor_layout.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "runtime/frame_ops.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {
namespace internal {

absl::StatusOr<std::unique_ptr<const ExecutorLayout>> ExecutorLayout::Create(
    std::unique_ptr<Graph> graph, Device* device, const KernelRegistry& kernels,
    FunctionRuntime* function_runtime, StatefulKernels* shared) {
  std::unique_ptr<ExecutorLayout> layout(
      new ExecutorLayout(std::move(graph), device, function_runtime));
  RETURN_IF_ERROR(layout->Initialize(kernels, shared));
  return std::unique_ptr<const ExecutorLayout>(std::move(layout));
}

absl::Status ExecutorLayout::Initialize(const KernelRegistry& kernels, StatefulKernels* shared) {
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
  std::vector<int> item_of(graph_->num_node_ids(), -1);
  items_.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Node* n = order[i];
    item_of[n->id()] = static_cast<int>(i);
    NodeItem& item = items_[i];
    item.node = n;
    auto make = [&] { return kernels.CreateKernel(*n, device_, function_runtime_); };
    if (shared != nullptr) {
      ASSIGN_OR_RETURN(item.kernel, shared->GetOrCreate(*n, *device_, make));
    } else {
      ASSIGN_OR_RETURN(item.kernel, make());
    }
    // A GPU's kernels only enqueue work: they run inline, never via the pool.
    item.expensive = item.kernel->IsExpensive() && !device_->has_device_memory();
    item.is_async = item.kernel->AsAsync() != nullptr;
    item.allows_uninitialized_input = n->op_def().allows_uninitialized_input;
    item.num_inputs = n->num_inputs();
    item.num_outputs = n->num_outputs();
    item.pending_init = static_cast<int>(n->in_edges().size());
    item.is_retval = n->op() == kRetvalOp;
    item.is_send = n->op() == kSendOp;
    switch (n->control_flow()) {
      case ControlFlowRole::kSwitch:
        item.may_leave_outputs_unset = true;
        break;
      case ControlFlowRole::kMerge:
        item.kind = ItemKind::kMerge;
        item.pending_init = item.pending_init - item.num_inputs;  // its control inputs
        break;
      case ControlFlowRole::kEnter: {
        item.kind = ItemKind::kEnter;
        absl::StatusOr<bool> constant = n->GetAttr<bool>("is_constant");
        item.is_constant_enter = constant.ok() && *constant;
        break;
      }
      case ControlFlowRole::kExit:
        item.kind = ItemKind::kExit;
        break;
      case ControlFlowRole::kNextIteration:
        item.kind = ItemKind::kNextIteration;
        break;
      case ControlFlowRole::kControlTrigger:
        item.kind = ItemKind::kControlTrigger;
        break;
      default:
        break;
    }
    if (device_->has_device_memory()) {
      const KernelDef* def = kernels.FindKernelDef(*n, device_->device_type());
      if (def != nullptr) {
        ArgMemoryTypes m = HostMemoryArgs(*def, *n);
        item.input_on_host = std::move(m.input_on_host);
        item.output_on_host = std::move(m.output_on_host);
        item.host_kernel = def->all_host_memory();
      }
    }
    for (int k = 0; k < n->num_inputs(); ++k) {
      item.input_is_ref.push_back(IsRefType(n->input_type(k)));
      if (n->input_edge(k) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", n->DebugName(), ": input ", k, " is not connected"));
      }
    }
    if (n->in_edges().empty()) roots_.push_back(static_cast<int>(i));
  }
  RETURN_IF_ERROR(InitializeFrames(order, item_of));
  MarkReadsOrderedAfterUpdates(item_of);
  item_of_ = item_of;
  for (NodeItem& item : items_) {
    for (const Edge* e : item.node->out_edges()) {
      const NodeItem& dst = items_[item_of[e->dst->id()]];
      item.out_edges.push_back(OutEdge{item_of[e->dst->id()],
                                       e->IsControl() ? -1 : dst.input_start + e->dst_input,
                                       e->src_output});
    }
    std::vector<bool> consumed(item.num_outputs, false);
    for (const OutEdge& e : item.out_edges) {
      if (e.src_output >= 0 && !consumed[e.src_output]) {
        consumed[e.src_output] = true;
        item.consumed_outputs.push_back(e.src_output);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ExecutorLayout::InitializeFrames(absl::Span<Node* const> order,
                                              const std::vector<int>& item_of) {
  ASSIGN_OR_RETURN(ControlFlowInfo info, BuildControlFlowInfo(*graph_, order));
  bool has_recv = false;
  for (const Node* n : order) has_recv |= n->op() == kRecvOp;
  frames_.resize(info.frames.size());
  for (size_t f = 0; f < info.frames.size(); ++f) {
    frames_[f].info = info.frames[f];
    // A _Recv may receive a dead tensor from a cond or loop on another
    // device, so a partition with one counts dead inputs too.
    frames_[f].track_dead = info.has_control_flow || has_recv;
  }
  for (Node* n : order) {
    NodeItem& item = items_[item_of[n->id()]];
    FrameLayout& frame = frames_[info.frame_of[n->id()]];
    item.frame = info.frame_of[n->id()];
    item.local_id = static_cast<int>(frame.pending_init.size());
    frame.pending_init.push_back(item.pending_init);
    item.input_start = frame.num_slots;
    frame.num_slots += item.num_inputs;
    item.child_frame = info.enter_child[n->id()];
  }
  return absl::OkStatus();
}

// A variable read (a ref output into a non-ref input) normally takes the
// variable's value when the variable's node hands it over, so updates in the
// same step that are not ordered before the reader stay invisible to it. A
// reader that is ordered after an update of the same variable (through any
// data or control path) must see that update: its read happens when it runs.
void ExecutorLayout::MarkReadsOrderedAfterUpdates(const std::vector<int>& item_of) {
  std::vector<int> seen(items_.size(), -1);  // stamp of the last search that saw the item
  int stamp = 0;
  for (NodeItem& item : items_) item.read_when_run.assign(item.num_inputs, false);
  for (NodeItem& reader : items_) {
    for (int k = 0; k < reader.num_inputs; ++k) {
      const Edge* in = reader.node->input_edge(k);
      if (reader.input_is_ref[k] || !IsRefType(in->src->output_type(in->src_output))) continue;
      // The updaters: nodes taking the same variable output by reference.
      std::vector<bool> is_updater(items_.size(), false);
      bool any = false;
      for (const Edge* e : in->src->out_edges()) {
        if (!e->IsControl() && e->src_output == in->src_output &&
            IsRefType(e->dst->input_type(e->dst_input))) {
          is_updater[item_of[e->dst->id()]] = true;
          any = true;
        }
      }
      if (!any) continue;
      // Is one of them an ancestor of the reader?
      ++stamp;
      std::vector<const Node*> stack{reader.node};
      bool ordered_after = false;
      while (!stack.empty() && !ordered_after) {
        const Node* n = stack.back();
        stack.pop_back();
        for (const Edge* e : n->in_edges()) {
          int id = item_of[e->src->id()];
          if (seen[id] == stamp) continue;
          seen[id] = stamp;
          if (is_updater[id]) {
            ordered_after = true;
            break;
          }
          stack.push_back(e->src);
        }
      }
      reader.read_when_run[k] = ordered_after;
    }
  }
}

}  // namespace internal
}  // namespace sluice
