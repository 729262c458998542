#include "runtime/executor.h"

#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/status_macros.h"
#include "graph/algorithm.h"
#include "graph/control_flow_info.h"
#include "runtime/compute_pool.h"
#include "runtime/frame_ops.h"
#include "runtime/sendrecv_ops.h"

namespace sluice {
namespace {

// One outgoing edge, resolved to the consumer's item and input slot.
struct OutEdge {
  int dst_item;
  int dst_slot;    // index into the consumer's frame's input slots; -1 for control
  int src_output;  // -1 for control
};

// How the executor treats a node's outputs (graph/control_flow_info.h and
// graph/op_def.h's ControlFlowRole). Switch is kNormal: the output it does
// not set is dead.
enum class ItemKind : uint8_t { kNormal, kMerge, kEnter, kExit, kNextIteration, kControlTrigger };

// Everything about a node the executor needs at run time, laid out once.
struct NodeItem {
  const Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  ItemKind kind = ItemKind::kNormal;
  bool expensive = true;
  bool is_async = false;
  bool allows_uninitialized_input = false;
  // An output the kernel leaves unset is dead (Switch), not an error.
  bool may_leave_outputs_unset = false;
  int frame = 0;         // the static frame the node runs in
  int local_id = 0;      // index into its frame's per-iteration counters
  int input_start = 0;   // first input slot, in its frame's slots
  int num_inputs = 0;
  int num_outputs = 0;
  int pending_init = 0;  // in-edges; for a Merge its control in-edges
  int child_frame = -1;  // an Enter: the frame it leads into
  bool is_constant_enter = false;
  std::vector<bool> input_is_ref;
  // Per input: a variable arriving here is read when this node runs, because
  // this node is ordered after an update of that variable (see Initialize).
  std::vector<bool> read_when_run;
  std::vector<OutEdge> out_edges;
  // On a device with device memory: per input / output, 1 where the kernel
  // wants host memory (KernelDef::HostMemory). Empty elsewhere.
  std::vector<uint8_t> input_on_host;
  std::vector<uint8_t> output_on_host;
  // On a device with device memory: the kernel runs on the host
  // (KernelDef::AllHostMemory), so its temporaries are host memory too.
  bool host_kernel = false;
  // A _Retval: with Args::retvals_on_device its input stays where it is.
  bool is_retval = false;
  bool is_send = false;
};

// A static frame's layout: its nodes' input slots and initial pending counts.
struct FrameLayout {
  FrameInfo info;
  int num_slots = 0;
  std::vector<int> pending_init;  // by local id
  // The graph has control flow: iterations count dead inputs. Without it
  // nothing is ever dead, and a step allocates no dead counts.
  bool track_dead = false;
};

struct FrameState;

// The id of a loop's run started from iteration `iter` of the frame
// `parent_id`: the same on every partition of the loop (and in every
// process), so that transfers inside it meet (runtime/rendezvous.h).
// FNV-1a (64-bit) rather than absl::Hash, which is seeded per process.
uint64_t ChildFrameId(uint64_t parent_id, int64_t iter, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ULL;
    }
  };
  mix(&parent_id, sizeof(parent_id));
  mix(&iter, sizeof(iter));
  mix(name.data(), name.size());
  return h == 0 ? 1 : h;  // 0 is the root frame
}

// The state of one iteration of one frame (the root frame has one).
struct IterationState {
  IterationState(const FrameLayout& layout, int64_t iter)
      : iter(iter),
        slots(layout.num_slots),
        pending(new std::atomic<int>[layout.pending_init.size()]) {
    const size_t n = layout.pending_init.size();
    for (size_t i = 0; i < n; ++i) {
      pending[i].store(layout.pending_init[i], std::memory_order_relaxed);
    }
    if (layout.track_dead) {
      dead.reset(new std::atomic<int>[n]);
      merge_live.reset(new uint8_t[n]);
      for (size_t i = 0; i < n; ++i) {
        dead[i].store(0, std::memory_order_relaxed);
        merge_live[i] = 0;
      }
    }
  }

  const int64_t iter;
  std::vector<TensorValue> slots;
  // Inputs not yet arrived; for a Merge, control inputs not yet arrived.
  std::unique_ptr<std::atomic<int>[]> pending;
  // Dead inputs arrived (null without control flow: nothing is dead).
  std::unique_ptr<std::atomic<int>[]> dead;
  // A Merge's first live input: guarded by merge_mu.
  absl::Mutex merge_mu;
  std::unique_ptr<uint8_t[]> merge_live;
  // Below: a loop frame's iterations only, guarded by the frame's mu.
  int outstanding_ops = 0;     // nodes of this iteration ready or running
  int outstanding_frames = 0;  // child frames started from this iteration
  // Child frames by static frame index; guarded by the frame's mu (the
  // root frame's too).
  absl::flat_hash_map<int, std::unique_ptr<FrameState>> children;
};

// One value on its way into a new iteration, or a loop invariant.
struct PendingValue {
  int item;  // the Enter or NextIteration that produced it
  TensorValue value;
  bool dead = false;
};

// The state of one execution of a static frame: the root frame, or one loop
// started from one iteration of its parent frame.
struct FrameState {
  FrameState(const FrameLayout* layout, FrameState* parent, IterationState* parent_iter,
             int static_id)
      : layout(layout), parent(parent), parent_iter(parent_iter), static_id(static_id),
        frame_id(parent == nullptr
                     ? 0
                     : ChildFrameId(parent->frame_id, parent_iter->iter, layout->info.name)),
        pending_enters(layout->info.num_enters) {
    iterations.push_back(std::make_unique<IterationState>(*layout, 0));
  }
  bool is_root() const { return parent == nullptr; }

  IterationState* Iteration(int64_t i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (i < first_iter || i >= first_iter + static_cast<int64_t>(iterations.size())) {
      return nullptr;
    }
    return iterations[i - first_iter].get();
  }
  int64_t newest() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return first_iter + static_cast<int64_t>(iterations.size()) - 1;
  }

  const FrameLayout* const layout;
  FrameState* const parent;
  IterationState* const parent_iter;
  const int static_id;  // index of `layout` among the executor's frames
  const uint64_t frame_id;  // this run's id in rendezvous keys; 0: the root
  absl::Mutex mu;
  // The live iterations, oldest first; iteration 0 exists from the start.
  // (A vector: at most parallel_iterations long, and the root frame's one
  // iteration costs a step a single allocation.)
  std::vector<std::unique_ptr<IterationState>> iterations ABSL_GUARDED_BY(mu);
  int64_t first_iter ABSL_GUARDED_BY(mu) = 0;
  int pending_enters ABSL_GUARDED_BY(mu);  // Enters into the frame not yet run
  std::vector<PendingValue> invariants ABSL_GUARDED_BY(mu);  // constant Enters' values
  // NextIteration values waiting while parallel_iterations are live.
  std::vector<PendingValue> deferred ABSL_GUARDED_BY(mu);
  // Exits that were dead in the then newest iteration (item, iteration):
  // those of the last iteration (the whole loop was dead) give their
  // consumers in the parent dead inputs when the frame ends.
  std::vector<std::pair<int, int64_t>> dead_exits ABSL_GUARDED_BY(mu);
};

// A node ready to run in one iteration of one frame.
struct TaggedNode {
  int id;
  FrameState* frame;
  IterationState* iter;
  bool dead;
};

TaggedNode Dead(TaggedNode t) {
  t.dead = true;
  return t;
}

class ExecutorImpl;

// The state of one Run.
struct RunState {
  RunState(const ExecutorImpl* ex, const Executor::Args& a, std::function<void(absl::Status)> d,
           const FrameLayout* root_layout)
      : executor(ex), args(a), done(std::move(d)),
        root(root_layout, nullptr, nullptr, 0) {}

  const ExecutorImpl* executor;
  Executor::Args args;
  std::function<void(absl::Status)> done;
  FrameState root;  // owns every loop frame through its iterations
  std::atomic<int> outstanding{0};   // nodes ready or running, in every frame
  std::atomic<bool> aborted{false};
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);
};

bool HasValue(const TensorValue& v) { return v.tensor.IsInitialized() || v.ref != nullptr; }

class ExecutorImpl : public Executor {
 public:
  ExecutorImpl(std::unique_ptr<Graph> graph, Device* device)
      : graph_(std::move(graph)), device_(device) {}

  absl::Status Initialize(const KernelRegistry& kernels);
  // A variable read (a ref output into a non-ref input) normally takes the
  // variable's value when the variable's node hands it over, so updates in
  // the same step that are not ordered before the reader stay invisible to it.
  // A reader that is ordered after an update of the same variable (through
  // any data or control path) must see that update: its read happens when it
  // runs. This marks those inputs.
  void MarkReadsOrderedAfterUpdates(const std::vector<int>& item_of);
  void RunAsync(const Args& args, std::function<void(absl::Status)> done) override;
  const Graph& graph() const override { return *graph_; }

  // Runs the `first` nodes and then, inline, whatever they make ready that is
  // cheap (and one expensive node); the rest goes to the device's pool.
  void Process(RunState* rs, absl::Span<const TaggedNode> first) const;

 private:
  using ReadyStack = absl::InlinedVector<TaggedNode, 16>;
  struct AsyncRun;

  absl::Status InitializeFrames(absl::Span<Node* const> order, const std::vector<int>& item_of);

  // Takes the current value of variables arriving on non-ref inputs, and on
  // a device with device memory moves each input to the memory its kernel
  // wants it in.
  absl::Status ReadInputs(RunState* rs, const NodeItem& item, TensorValue* inputs) const;
  absl::Status MoveToKernelMemory(const NodeItem& item, int k, Tensor* t) const;
  OpKernelContext::Params MakeParams(RunState* rs, const TaggedNode& t, TensorValue* inputs,
                                     absl::Span<TensorValue> outputs) const;
  void ReleaseInputs(const NodeItem& item, TensorValue* inputs) const;
  void RecordStats(RunState* rs, const NodeItem& item, int64_t start_us,
                   absl::Span<const TensorValue> outputs, const OpKernelContext& ctx) const;

  // Hands a finished (or dead) node's outputs on — within its iteration, into
  // a child frame (Enter), to the parent frame (Exit) or to the next
  // iteration (NextIteration) — and pushes the nodes it makes ready onto
  // `ready` (extra expensive ones go to the pool); on error fails the run.
  void Propagate(RunState* rs, const TaggedNode& t, const absl::Status& s,
                 absl::Span<const TensorValue> outputs, ReadyStack* ready) const;
  // Delivers `item`'s outputs (all dead when `dead`) to its consumers in one
  // iteration; pushes those it makes ready. Returns how many.
  int ActivateNodes(RunState* rs, const NodeItem& item, bool dead,
                    absl::Span<const TensorValue> outputs, FrameState* frame,
                    IterationState* iter, ReadyStack* ready) const;
  // ActivateNodes, with a loop frame's lock and iteration accounting.
  void ActivateInFrame(RunState* rs, const NodeItem& item, bool dead,
                       absl::Span<const TensorValue> outputs, FrameState* frame,
                       IterationState* iter, ReadyStack* ready) const;
  // Keeps the cheap nodes pushed since `from` and, on one of the device's
  // threads, one expensive node for this thread; schedules the other
  // expensive ones on the pool.
  void Dispatch(RunState* rs, ReadyStack* ready, size_t from) const;
  bool KeepsExpensiveNodes(const RunState* rs) const;

  // Loops (see FrameState).
  FrameState* FindOrCreateChild(FrameState* frame, IterationState* iter, int child) const;
  void RunEnter(RunState* rs, const TaggedNode& t, absl::Span<const TensorValue> outputs,
                ReadyStack* ready) const;
  void RunNextIteration(RunState* rs, const TaggedNode& t, absl::Span<const TensorValue> outputs,
                        ReadyStack* ready) const;
  IterationState* StartIteration(RunState* rs, FrameState* frame, ReadyStack* ready) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  // Ends the oldest iterations while they are done; true when the frame is.
  bool CleanupIterations(RunState* rs, FrameState* frame, ReadyStack* ready) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(frame->mu);
  // One node of a loop iteration is done.
  void FinishInFrame(RunState* rs, FrameState* frame, IterationState* iter,
                     ReadyStack* ready) const;
  // A finished loop frame: its dead exits reach the parent, and it is freed.
  void DeleteFrame(RunState* rs, FrameState* frame, ReadyStack* ready) const;

  void LaunchAsync(RunState* rs, const TaggedNode& t) const;
  // Records the run's first error and aborts the step's rendezvous.
  void Fail(RunState* rs, const absl::Status& s) const;
  bool Aborted(RunState* rs) const;
  void Finish(RunState* rs) const;

  std::unique_ptr<Graph> graph_;
  Device* device_;
  std::vector<NodeItem> items_;
  std::vector<FrameLayout> frames_;  // [0]: the root frame
  std::vector<int> roots_;
};

absl::Status ExecutorImpl::Initialize(const KernelRegistry& kernels) {
  ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph_));
  std::vector<int> item_of(graph_->num_node_ids(), -1);
  items_.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Node* n = order[i];
    item_of[n->id()] = static_cast<int>(i);
    NodeItem& item = items_[i];
    item.node = n;
    ASSIGN_OR_RETURN(item.kernel, kernels.CreateKernel(*n, device_));
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
  for (NodeItem& item : items_) {
    for (const Edge* e : item.node->out_edges()) {
      const NodeItem& dst = items_[item_of[e->dst->id()]];
      item.out_edges.push_back(OutEdge{item_of[e->dst->id()],
                                       e->IsControl() ? -1 : dst.input_start + e->dst_input,
                                       e->src_output});
    }
  }
  return absl::OkStatus();
}

absl::Status ExecutorImpl::InitializeFrames(absl::Span<Node* const> order,
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

void ExecutorImpl::MarkReadsOrderedAfterUpdates(const std::vector<int>& item_of) {
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

void ExecutorImpl::RunAsync(const Args& args, std::function<void(absl::Status)> done) {
  auto* rs = new RunState(this, args, std::move(done), &frames_[0]);
  if (roots_.empty()) {
    Finish(rs);
    return;
  }
  FrameState* root = &rs->root;
  IterationState* iter0;
  {
    absl::MutexLock lock(&root->mu);
    iter0 = root->Iteration(0);
  }
  rs->outstanding.store(static_cast<int>(roots_.size()));
  // Cheap roots (constants, arguments) run here; of the expensive ones the
  // first runs here too (when this is one of the device's threads) and the
  // rest go to the pool.
  absl::InlinedVector<TaggedNode, 16> here;
  const bool may_keep = KeepsExpensiveNodes(rs);
  bool kept_expensive = false;
  for (int r : roots_) {
    const TaggedNode t{r, root, iter0, false};
    if (!items_[r].expensive || (may_keep && !kept_expensive) || args.run_inline) {
      kept_expensive |= items_[r].expensive;
      here.push_back(t);
    } else {
      device_->thread_pool()->Schedule([this, rs, t] { Process(rs, {t}); });
    }
  }
  // With nothing here, the step may already be finished (and rs freed).
  if (!here.empty()) Process(rs, here);
}

absl::Status ExecutorImpl::ReadInputs(RunState* rs, const NodeItem& item,
                                      TensorValue* inputs) const {
  for (int k = 0; k < item.num_inputs; ++k) {
    TensorValue& v = inputs[k];
    if (v.ref != nullptr && !item.input_is_ref[k]) {
      Var* var = v.ref;
      absl::MutexLock lock(&var->mu);
      if (!var->initialized && !item.allows_uninitialized_input) {
        return absl::FailedPreconditionError(
            absl::StrCat("Attempting to use uninitialized value ", var->name));
      }
      v.tensor = var->tensor;
      v.ref = nullptr;
    }
    if (!item.input_on_host.empty() && v.ref == nullptr &&
        !(item.is_retval && rs->args.retvals_on_device)) {
      RETURN_IF_ERROR(MoveToKernelMemory(item, k, &v.tensor));
    }
  }
  return absl::OkStatus();
}

absl::Status ExecutorImpl::MoveToKernelMemory(const NodeItem& item, int k, Tensor* t) const {
  if (!t->IsInitialized() || HoldsStrings(t->dtype())) return absl::OkStatus();
  const bool want_host = item.input_on_host[k] != 0;
  if (want_host == !t->on_device()) return absl::OkStatus();
  absl::StatusOr<Tensor> moved = want_host ? device_->CopyToHost(*t) : device_->CopyFromHost(*t);
  if (!moved.ok()) {
    return AddContext(moved.status(), absl::StrCat("moving input ", k, " to ",
                                                   want_host ? "host" : "device", " memory"));
  }
  *t = *std::move(moved);
  return absl::OkStatus();
}

OpKernelContext::Params ExecutorImpl::MakeParams(RunState* rs, const TaggedNode& t,
                                                 TensorValue* inputs,
                                                 absl::Span<TensorValue> outputs) const {
  const NodeItem& item = items_[t.id];
  OpKernelContext::Params params;
  params.frame_iter = FrameAndIter{t.frame->frame_id, t.iter->iter};
  params.is_input_dead = t.dead;
  params.node = item.node;
  params.device = device_;
  params.step_id = rs->args.step_id;
  params.inputs = absl::MakeSpan(inputs, item.num_inputs);
  params.outputs = outputs;
  params.call_frame = rs->args.call_frame;
  params.rendezvous = rs->args.rendezvous;
  params.collective_executor = rs->args.collective_executor;
  if (!item.output_on_host.empty()) params.output_on_host = item.output_on_host.data();
  params.host_kernel = item.host_kernel;
  return params;
}

void ExecutorImpl::ReleaseInputs(const NodeItem& item, TensorValue* inputs) const {
  for (int k = 0; k < item.num_inputs; ++k) inputs[k] = TensorValue();
}

void ExecutorImpl::RecordStats(RunState* rs, const NodeItem& item, int64_t start_us,
                               absl::Span<const TensorValue> outputs,
                               const OpKernelContext& ctx) const {
  StepStatsCollector* stats = rs->args.stats;
  NodeExecStats n;
  n.node_name = item.node->name();
  n.op = item.node->op();
  n.device = device_->name();
  n.start_us = start_us;
  n.end_us = stats->NowMicros();
  n.thread_id =
      static_cast<int64_t>(std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000);
  for (const TensorValue& v : outputs) n.output_bytes += v.tensor.TotalBytes();
  n.flow_key = ctx.trace_flow_key();
  n.flow_is_send = ctx.trace_flow_is_send();
  stats->Record(std::move(n));
}

void ExecutorImpl::Fail(RunState* rs, const absl::Status& s) const {
  {
    absl::MutexLock lock(&rs->mu);
    if (!rs->status.ok()) return;
    rs->status = s;
    rs->aborted.store(true);
  }
  if (rs->args.rendezvous != nullptr) rs->args.rendezvous->StartAbort(s);
}

bool ExecutorImpl::Aborted(RunState* rs) const {
  if (rs->aborted.load(std::memory_order_relaxed)) return true;
  if (rs->args.rendezvous != nullptr && rs->args.rendezvous->aborted()) {
    // Another partition failed; its error is the step's.
    absl::MutexLock lock(&rs->mu);
    if (rs->status.ok()) rs->status = absl::CancelledError("step cancelled by another partition");
    rs->aborted.store(true);
    return true;
  }
  return false;
}

int ExecutorImpl::ActivateNodes(RunState* rs, const NodeItem& item, bool dead,
                                absl::Span<const TensorValue> outputs, FrameState* frame,
                                IterationState* iter, ReadyStack* ready) const {
  // First fill every consumer's slot, then release consumers, so no consumer
  // can run (and update a variable) before all reads of this node's outputs
  // are taken. A Merge takes its input when it decides (below).
  if (!dead) {
    for (const OutEdge& e : item.out_edges) {
      if (e.dst_slot < 0) continue;
      const TensorValue& v = outputs[e.src_output];
      if (!HasValue(v)) {
        if (item.may_leave_outputs_unset) continue;  // a dead output
        Fail(rs, absl::InternalError(absl::StrCat("node ", item.node->DebugName(),
                                                  " did not produce output ", e.src_output)));
        return 0;
      }
      const NodeItem& dst = items_[e.dst_item];
      if (dst.kind == ItemKind::kMerge) continue;
      TensorValue& slot = iter->slots[e.dst_slot];
      slot = v;
      const int k = e.dst_slot - dst.input_start;
      if (v.ref != nullptr && !dst.input_is_ref[k] && !dst.read_when_run[k]) {
        // A read of a variable takes its value now: updates in the same step
        // that are not ordered before the reader copy on write and leave this
        // snapshot alone (see MarkReadsOrderedAfterUpdates). An uninitialized
        // variable is read when the consumer runs (an Assign ordered before it
        // in this step may initialize it).
        absl::MutexLock lock(&v.ref->mu);
        if (v.ref->initialized) {
          slot.tensor = v.ref->tensor;
          slot.ref = nullptr;
        }
      }
    }
  }
  int activated = 0;
  for (const OutEdge& e : item.out_edges) {
    if (rs->aborted.load(std::memory_order_relaxed)) break;
    const NodeItem& dst = items_[e.dst_item];
    const int k = dst.local_id;
    const bool edge_dead = dead || (e.src_output >= 0 && !HasValue(outputs[e.src_output]));
    bool now_ready = false;
    bool dst_dead = false;
    if (dst.kind == ItemKind::kMerge) {
      // Ready once its control inputs are in and either a live data input
      // arrives (the first one is taken) or every data input is dead.
      absl::MutexLock lock(&iter->merge_mu);
      const bool live = iter->merge_live[k] != 0;
      if (e.dst_slot < 0) {
        const int left = iter->pending[k].fetch_sub(1, std::memory_order_relaxed) - 1;
        dst_dead = !live && iter->dead[k].load(std::memory_order_relaxed) == dst.num_inputs;
        now_ready = left == 0 && (live || dst_dead);
      } else if (!edge_dead) {
        if (!live) {
          iter->merge_live[k] = 1;
          iter->slots[e.dst_slot] = outputs[e.src_output];
          now_ready = iter->pending[k].load(std::memory_order_relaxed) == 0;
        }
      } else {
        // A dead Enter kills its loop's Merge at once (its NextIteration
        // input will never come): the whole loop then runs dead once, and
        // its Exits, dead, reach consumers on other devices too.
        const int d = iter->dead[k].fetch_add(1, std::memory_order_relaxed) + 1;
        dst_dead = !live && (d == dst.num_inputs || item.kind == ItemKind::kEnter);
        now_ready = dst_dead && iter->pending[k].load(std::memory_order_relaxed) == 0;
      }
    } else {
      // The dead count is raised before the pending count falls, so the
      // thread that takes it to zero sees every dead input.
      if (edge_dead) iter->dead[k].fetch_add(1, std::memory_order_relaxed);
      now_ready = iter->pending[k].fetch_sub(1, std::memory_order_acq_rel) == 1;
      if (now_ready && iter->dead != nullptr && dst.kind != ItemKind::kControlTrigger) {
        dst_dead = iter->dead[k].load(std::memory_order_relaxed) > 0;
      }
    }
    if (now_ready) {
      ready->push_back(TaggedNode{e.dst_item, frame, iter, dst_dead});
      ++activated;
    }
  }
  if (activated > 0) rs->outstanding.fetch_add(activated, std::memory_order_relaxed);
  return activated;
}

void ExecutorImpl::ActivateInFrame(RunState* rs, const NodeItem& item, bool dead,
                                   absl::Span<const TensorValue> outputs, FrameState* frame,
                                   IterationState* iter, ReadyStack* ready) const {
  if (frame->is_root()) {
    ActivateNodes(rs, item, dead, outputs, frame, iter, ready);
    return;
  }
  absl::MutexLock lock(&frame->mu);
  iter->outstanding_ops += ActivateNodes(rs, item, dead, outputs, frame, iter, ready);
}

// A thread that is not the device's (the session's caller, or another
// device's thread completing a transfer) runs no expensive node of this
// device: the device's kernels then use exactly its pool, its share of the
// cores (runtime/compute_pool.h), and devices compute at once without
// oversubscribing. run_inline steps run everything on the caller by request.
bool ExecutorImpl::KeepsExpensiveNodes(const RunState* rs) const {
  const ThreadPool* pool = device_->thread_pool();
  return rs->args.run_inline || pool == nullptr || pool->InPool();
}

void ExecutorImpl::Dispatch(RunState* rs, ReadyStack* ready, size_t from) const {
  if (rs->args.run_inline || ready->size() <= from) return;
  // The one expensive node kept here runs after the cheap ones.
  size_t kept = from;
  const bool may_keep = KeepsExpensiveNodes(rs);
  bool kept_expensive = false;
  TaggedNode expensive{};
  for (size_t i = from; i < ready->size(); ++i) {
    const TaggedNode t = (*ready)[i];
    if (!items_[t.id].expensive || t.dead) {
      (*ready)[kept++] = t;
    } else if (may_keep && !kept_expensive) {
      kept_expensive = true;
      expensive = t;
    } else {
      device_->thread_pool()->Schedule([this, rs, t] { Process(rs, {t}); });
    }
  }
  ready->resize(kept);
  if (kept_expensive) ready->insert(ready->begin(), expensive);
}

void ExecutorImpl::Propagate(RunState* rs, const TaggedNode& t, const absl::Status& s,
                             absl::Span<const TensorValue> outputs, ReadyStack* ready) const {
  const NodeItem& item = items_[t.id];
  if (!s.ok()) {
    Fail(rs, AddContext(s, absl::StrCat("node ", item.node->DebugName())));
    return;
  }
  const size_t from = ready->size();
  switch (item.kind) {
    case ItemKind::kEnter:
      RunEnter(rs, t, outputs, ready);
      break;
    case ItemKind::kExit:
      if (t.dead) {
        // Dead on a continuing iteration: dropped. Dead on the newest: the
        // whole loop may be dead; its consumers hear so when the frame ends.
        absl::MutexLock lock(&t.frame->mu);
        if (t.iter->iter == t.frame->newest()) t.frame->dead_exits.emplace_back(t.id, t.iter->iter);
      } else {
        ActivateInFrame(rs, item, false, outputs, t.frame->parent, t.frame->parent_iter, ready);
      }
      break;
    case ItemKind::kNextIteration:
      if (!t.dead) RunNextIteration(rs, t, outputs, ready);  // a dead one ends the loop
      break;
    default:
      ActivateInFrame(rs, item, t.dead, outputs, t.frame, t.iter, ready);
      break;
  }
  if (!t.frame->is_root()) FinishInFrame(rs, t.frame, t.iter, ready);
  Dispatch(rs, ready, from);
}

FrameState* ExecutorImpl::FindOrCreateChild(FrameState* frame, IterationState* iter,
                                            int child) const {
  absl::MutexLock lock(&frame->mu);
  std::unique_ptr<FrameState>& state = iter->children[child];
  if (state == nullptr) {
    state = std::make_unique<FrameState>(&frames_[child], frame, iter, child);
    ++iter->outstanding_frames;
  }
  return state.get();
}

void ExecutorImpl::RunEnter(RunState* rs, const TaggedNode& t,
                            absl::Span<const TensorValue> outputs, ReadyStack* ready) const {
  const NodeItem& item = items_[t.id];
  FrameState* child = FindOrCreateChild(t.frame, t.iter, item.child_frame);
  bool done;
  {
    absl::MutexLock lock(&child->mu);
    if (item.is_constant_enter) {
      // A loop invariant: every iteration, present and future, gets it.
      PendingValue v{t.id, t.dead ? TensorValue() : outputs[0], t.dead};
      for (auto& iter : child->iterations) {
        iter->outstanding_ops += ActivateNodes(rs, item, v.dead, {&v.value, 1}, child,
                                               iter.get(), ready);
      }
      child->invariants.push_back(std::move(v));
    } else {
      // Iteration 0 lives until every Enter has run.
      IterationState* first = child->Iteration(0);
      first->outstanding_ops += ActivateNodes(rs, item, t.dead, outputs, child, first, ready);
    }
    --child->pending_enters;
    done = CleanupIterations(rs, child, ready);
  }
  if (done) DeleteFrame(rs, child, ready);
}

void ExecutorImpl::RunNextIteration(RunState* rs, const TaggedNode& t,
                                    absl::Span<const TensorValue> outputs,
                                    ReadyStack* ready) const {
  const NodeItem& item = items_[t.id];
  FrameState* frame = t.frame;
  absl::MutexLock lock(&frame->mu);
  IterationState* next = frame->Iteration(t.iter->iter + 1);
  if (next == nullptr) {
    if (static_cast<int>(frame->iterations.size()) >= frame->layout->info.parallel_iterations) {
      // parallel_iterations are live: the value waits for the oldest to end.
      frame->deferred.push_back(PendingValue{t.id, outputs[0], false});
      return;
    }
    next = StartIteration(rs, frame, ready);
  }
  next->outstanding_ops += ActivateNodes(rs, item, false, outputs, frame, next, ready);
}

IterationState* ExecutorImpl::StartIteration(RunState* rs, FrameState* frame,
                                             ReadyStack* ready) const {
  frame->iterations.push_back(
      std::make_unique<IterationState>(*frame->layout, frame->newest() + 1));
  IterationState* iter = frame->iterations.back().get();
  for (const PendingValue& v : frame->invariants) {
    iter->outstanding_ops += ActivateNodes(rs, items_[v.item], v.dead, {&v.value, 1}, frame,
                                           iter, ready);
  }
  return iter;
}

bool ExecutorImpl::CleanupIterations(RunState* rs, FrameState* frame, ReadyStack* ready) const {
  while (!frame->iterations.empty()) {
    IterationState* oldest = frame->iterations.front().get();
    if (oldest->outstanding_ops > 0 || oldest->outstanding_frames > 0) break;
    if (oldest->iter == 0 && frame->pending_enters > 0) break;
    frame->iterations.erase(frame->iterations.begin());  // frees the iteration's tensors
    ++frame->first_iter;
    if (!frame->deferred.empty()) {
      // The values every NextIteration of the newest iteration deferred.
      IterationState* next = StartIteration(rs, frame, ready);
      std::vector<PendingValue> values = std::move(frame->deferred);
      frame->deferred.clear();
      for (const PendingValue& v : values) {
        next->outstanding_ops += ActivateNodes(rs, items_[v.item], false, {&v.value, 1}, frame,
                                               next, ready);
      }
    }
  }
  return frame->iterations.empty() && frame->pending_enters == 0;
}

void ExecutorImpl::FinishInFrame(RunState* rs, FrameState* frame, IterationState* iter,
                                 ReadyStack* ready) const {
  bool done;
  {
    absl::MutexLock lock(&frame->mu);
    --iter->outstanding_ops;
    done = CleanupIterations(rs, frame, ready);
  }
  if (done) DeleteFrame(rs, frame, ready);
}

void ExecutorImpl::DeleteFrame(RunState* rs, FrameState* frame, ReadyStack* ready) const {
  FrameState* parent = frame->parent;
  IterationState* parent_iter = frame->parent_iter;
  std::vector<int> dead_exits;
  {
    absl::MutexLock lock(&frame->mu);  // nothing else touches a finished frame
    const int64_t last = frame->first_iter - 1;
    for (const auto& [id, iter] : frame->dead_exits) {
      if (iter == last) dead_exits.push_back(id);
    }
  }
  bool parent_done = false;
  {
    absl::MutexLock lock(&parent->mu);
    for (int id : dead_exits) {
      const int n = ActivateNodes(rs, items_[id], /*dead=*/true, {}, parent, parent_iter, ready);
      if (!parent->is_root()) parent_iter->outstanding_ops += n;
    }
    --parent_iter->outstanding_frames;
    parent_iter->children.erase(frame->static_id);  // frees `frame`
    if (!parent->is_root()) parent_done = CleanupIterations(rs, parent, ready);
  }
  if (parent_done) DeleteFrame(rs, parent, ready);
}

// The state of an asynchronous kernel between ComputeAsync and its done.
struct ExecutorImpl::AsyncRun {
  std::vector<TensorValue> outputs;
  std::unique_ptr<OpKernelContext> ctx;
  int64_t start_us = 0;
};

void ExecutorImpl::LaunchAsync(RunState* rs, const TaggedNode& t) const {
  const NodeItem& item = items_[t.id];
  TensorValue* inputs = t.iter->slots.data() + item.input_start;
  auto* run = new AsyncRun;
  run->outputs.resize(item.num_outputs);
  run->start_us = rs->args.stats ? rs->args.stats->NowMicros() : 0;
  auto done = [this, rs, t, inputs, run](absl::Status s) {
    const NodeItem& item = items_[t.id];
    ReleaseInputs(item, inputs);
    if (rs->args.stats) RecordStats(rs, item, run->start_us, run->outputs, *run->ctx);
    ReadyStack ready;
    // A _Recv that received a dead tensor makes its outputs dead.
    Propagate(rs, run->ctx->is_output_dead() ? Dead(t) : t, s, run->outputs, &ready);
    delete run;
    // Whatever this made ready continues on this device's pool, not on the
    // thread (perhaps another device's) that completed the kernel.
    if (!ready.empty()) {
      std::vector<TaggedNode> first(ready.rbegin(), ready.rend());
      device_->thread_pool()->Schedule([this, rs, first = std::move(first)] { Process(rs, first); });
    }
    if (rs->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(rs);
  };
  absl::Status s = ReadInputs(rs, item, inputs);
  run->ctx = std::make_unique<OpKernelContext>(
      MakeParams(rs, t, inputs, absl::MakeSpan(run->outputs)));
  if (!s.ok()) {
    done(s);
    return;
  }
  item.kernel->AsAsync()->ComputeAsync(run->ctx.get(), std::move(done));
}

void ExecutorImpl::Process(RunState* rs, absl::Span<const TaggedNode> first) const {
  // A stack: the first nodes are pushed so that they run in the given order.
  ReadyStack inline_ready(first.rbegin(), first.rend());
  // Every kernel run here (LaunchAsync's too) is this device's: its inner
  // loops use this device's pool.
  ScopedComputePool compute_pool(device_->thread_pool());
  absl::InlinedVector<TensorValue, 4> outputs;
  StepStatsCollector* stats = rs->args.stats;
  while (!inline_ready.empty()) {
    const TaggedNode t = inline_ready.back();
    inline_ready.pop_back();
    const NodeItem& item = items_[t.id];
    if (!Aborted(rs)) {
      if (t.dead && !item.is_send) {
        if (item.is_retval) {
          const Edge* in = item.node->input_edge(0);
          Fail(rs, absl::InvalidArgumentError(absl::StrCat(
                       "fetched tensor ", in->src->name(), ":", in->src_output,
                       " was not computed: it is on a branch of a cond (Switch) that was "
                       "not taken")));
        } else {
          Propagate(rs, t, absl::OkStatus(), {}, &inline_ready);  // a dead node does not run
        }
      } else if (item.is_async) {
        LaunchAsync(rs, t);  // its completion accounts for it in `outstanding`
        continue;
      } else {
        int64_t start_us = stats ? stats->NowMicros() : 0;
        TensorValue* inputs = t.iter->slots.data() + item.input_start;
        outputs.resize(item.num_outputs);
        absl::Status s = ReadInputs(rs, item, inputs);
        // A dead _Send runs: it sends the deadness on (runtime/rendezvous.h).
        OpKernelContext ctx(MakeParams(rs, t, inputs, absl::MakeSpan(outputs)));
        if (s.ok()) s = item.kernel->Compute(&ctx);
        ReleaseInputs(item, inputs);  // early, so buffers can be reused in place
        if (stats) RecordStats(rs, item, start_us, outputs, ctx);
        Propagate(rs, ctx.is_output_dead() ? Dead(t) : t, s, outputs, &inline_ready);
        outputs.clear();
      }
    }
    if (rs->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Finish(rs);
      return;
    }
  }
}

void ExecutorImpl::Finish(RunState* rs) const {
  absl::Status s;
  {
    absl::MutexLock lock(&rs->mu);
    s = rs->status;
  }
  // A GPU's kernels finish after their Compute returns: the step ends when
  // they have, and their errors are its errors.
  if (device_->has_device_memory()) s.Update(device_->Sync());
  device_->resource_manager()->ClearStep(rs->args.step_id);
  std::function<void(absl::Status)> done = std::move(rs->done);
  delete rs;
  done(s);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device,
                                                           const KernelRegistry& kernels) {
  auto ex = std::make_unique<ExecutorImpl>(std::move(graph), device);
  RETURN_IF_ERROR(ex->Initialize(kernels));
  return std::unique_ptr<Executor>(std::move(ex));
}

absl::Status Executor::Run(const Args& args) {
  absl::Notification done;
  absl::Status result;
  RunAsync(args, [&](absl::Status s) {
    result = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return result;
}

}  // namespace sluice
