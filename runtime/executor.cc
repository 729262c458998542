#include "runtime/executor.h"

#include <atomic>
#include <functional>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "graph/algorithm.h"
#include "base/status_macros.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace {

// One outgoing edge, resolved to the consumer's item and input slot.
struct OutEdge {
  int dst_item;
  int dst_slot;    // absolute index into the step's input slots; -1 for control
  int src_output;  // -1 for control
};

// Everything about a node the executor needs at run time, laid out once.
struct NodeItem {
  const Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  bool expensive = true;
  bool is_async = false;
  bool allows_uninitialized_input = false;
  int input_start = 0;
  int num_inputs = 0;
  int num_outputs = 0;
  int pending_init = 0;
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
};

class ExecutorImpl;

// The state of one Run.
struct RunState {
  RunState(const ExecutorImpl* ex, const Executor::Args& a,
           std::function<void(absl::Status)> d, int num_slots, int num_items);

  const ExecutorImpl* executor;
  Executor::Args args;
  std::function<void(absl::Status)> done;
  std::vector<TensorValue> slots;
  std::unique_ptr<std::atomic<int>[]> pending;
  std::atomic<int> outstanding{0};
  std::atomic<bool> aborted{false};
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);
};

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

  // Runs the `first` items and then, inline, whatever they make ready that is
  // cheap (and one expensive node); the rest goes to the device's pool.
  void Process(RunState* rs, absl::Span<const int> first) const;

 private:
  using ReadyStack = absl::InlinedVector<int, 16>;
  struct AsyncRun;

  // Takes the current value of variables arriving on non-ref inputs, and on
  // a device with device memory moves each input to the memory its kernel
  // wants it in.
  absl::Status ReadInputs(RunState* rs, const NodeItem& item) const;
  absl::Status MoveToKernelMemory(const NodeItem& item, int k, Tensor* t) const;
  OpKernelContext::Params MakeParams(RunState* rs, const NodeItem& item,
                                     absl::Span<TensorValue> outputs) const;
  void ReleaseInputs(RunState* rs, const NodeItem& item) const;
  void RecordStats(RunState* rs, const NodeItem& item, int64_t start_us,
                   absl::Span<const TensorValue> outputs, const OpKernelContext& ctx) const;
  // Hands a finished node's outputs to its consumers and pushes the ones it
  // makes ready onto `ready` (extra expensive ones go to the pool); on error
  // fails the run.
  void Propagate(RunState* rs, const NodeItem& item, const absl::Status& s,
                 absl::Span<const TensorValue> outputs, ReadyStack* ready) const;
  void LaunchAsync(RunState* rs, int id) const;
  // Records the run's first error and aborts the step's rendezvous.
  void Fail(RunState* rs, const absl::Status& s) const;
  bool Aborted(RunState* rs) const;
  void Finish(RunState* rs) const;

  std::unique_ptr<Graph> graph_;
  Device* device_;
  std::vector<NodeItem> items_;
  std::vector<int> roots_;
  int num_slots_ = 0;
};

RunState::RunState(const ExecutorImpl* ex, const Executor::Args& a,
                   std::function<void(absl::Status)> d, int num_slots, int num_items)
    : executor(ex), args(a), done(std::move(d)), slots(num_slots),
      pending(new std::atomic<int>[num_items]) {}

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
    item.input_start = num_slots_;
    item.num_inputs = n->num_inputs();
    item.num_outputs = n->num_outputs();
    item.pending_init = static_cast<int>(n->in_edges().size());
    item.is_retval = n->op() == kRetvalOp;
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
    num_slots_ += item.num_inputs;
    if (item.pending_init == 0) roots_.push_back(static_cast<int>(i));
  }
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
  auto* rs = new RunState(this, args, std::move(done), num_slots_, static_cast<int>(items_.size()));
  for (size_t i = 0; i < items_.size(); ++i) {
    rs->pending[i].store(items_[i].pending_init, std::memory_order_relaxed);
  }
  if (roots_.empty()) {
    Finish(rs);
    return;
  }
  rs->outstanding.store(static_cast<int>(roots_.size()));
  // Cheap roots (constants, arguments) run here; of the expensive ones the
  // first runs here too and the rest go to the pool.
  absl::InlinedVector<int, 16> here;
  bool kept_expensive = false;
  for (int r : roots_) {
    if (!items_[r].expensive || !kept_expensive || args.run_inline) {
      kept_expensive |= items_[r].expensive;
      here.push_back(r);
    } else {
      device_->thread_pool()->Schedule([this, rs, r] { Process(rs, {r}); });
    }
  }
  Process(rs, here);
}

absl::Status ExecutorImpl::ReadInputs(RunState* rs, const NodeItem& item) const {
  TensorValue* inputs = rs->slots.data() + item.input_start;
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
  if (!t->IsInitialized() || t->dtype() == DT_STRING) return absl::OkStatus();
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

OpKernelContext::Params ExecutorImpl::MakeParams(RunState* rs, const NodeItem& item,
                                                 absl::Span<TensorValue> outputs) const {
  OpKernelContext::Params params;
  params.node = item.node;
  params.device = device_;
  params.step_id = rs->args.step_id;
  params.inputs = absl::MakeSpan(rs->slots.data() + item.input_start, item.num_inputs);
  params.outputs = outputs;
  params.call_frame = rs->args.call_frame;
  params.rendezvous = rs->args.rendezvous;
  params.collective_executor = rs->args.collective_executor;
  if (!item.output_on_host.empty()) params.output_on_host = item.output_on_host.data();
  params.host_kernel = item.host_kernel;
  return params;
}

void ExecutorImpl::ReleaseInputs(RunState* rs, const NodeItem& item) const {
  TensorValue* inputs = rs->slots.data() + item.input_start;
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

void ExecutorImpl::Propagate(RunState* rs, const NodeItem& item, const absl::Status& s,
                             absl::Span<const TensorValue> outputs, ReadyStack* ready) const {
  if (!s.ok()) {
    Fail(rs, AddContext(s, absl::StrCat("node ", item.node->DebugName())));
    return;
  }
  // First fill every consumer's slot, then release consumers, so no consumer
  // can run (and update a variable) before all reads of this node's outputs
  // are taken.
  for (const OutEdge& e : item.out_edges) {
    if (e.dst_slot < 0) continue;
    const TensorValue& v = outputs[e.src_output];
    if (!v.tensor.IsInitialized() && v.ref == nullptr) {
      Fail(rs, absl::InternalError(absl::StrCat("node ", item.node->DebugName(),
                                                " did not produce output ", e.src_output)));
      return;
    }
    TensorValue& slot = rs->slots[e.dst_slot];
    slot = v;
    const NodeItem& dst = items_[e.dst_item];
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
  int expensive_inline = -1;
  for (const OutEdge& e : item.out_edges) {
    if (rs->aborted.load(std::memory_order_relaxed)) break;
    if (rs->pending[e.dst_item].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      rs->outstanding.fetch_add(1, std::memory_order_relaxed);
      if (!items_[e.dst_item].expensive || rs->args.run_inline) {
        ready->push_back(e.dst_item);
      } else if (expensive_inline < 0) {
        expensive_inline = e.dst_item;
      } else {
        int next = e.dst_item;
        device_->thread_pool()->Schedule([this, rs, next] { Process(rs, {next}); });
      }
    }
  }
  // The one expensive node kept here runs after the cheap ones.
  if (expensive_inline >= 0) ready->insert(ready->begin(), expensive_inline);
}

// The state of an asynchronous kernel between ComputeAsync and its done.
struct ExecutorImpl::AsyncRun {
  std::vector<TensorValue> outputs;
  std::unique_ptr<OpKernelContext> ctx;
  int64_t start_us = 0;
};

void ExecutorImpl::LaunchAsync(RunState* rs, int id) const {
  const NodeItem& item = items_[id];
  auto* run = new AsyncRun;
  run->outputs.resize(item.num_outputs);
  run->start_us = rs->args.stats ? rs->args.stats->NowMicros() : 0;
  auto done = [this, rs, id, run](absl::Status s) {
    const NodeItem& item = items_[id];
    ReleaseInputs(rs, item);
    if (rs->args.stats) RecordStats(rs, item, run->start_us, run->outputs, *run->ctx);
    ReadyStack ready;
    Propagate(rs, item, s, run->outputs, &ready);
    delete run;
    // Whatever this made ready continues on this device's pool, not on the
    // thread (perhaps another device's) that completed the kernel.
    if (!ready.empty()) {
      std::vector<int> first(ready.rbegin(), ready.rend());
      device_->thread_pool()->Schedule([this, rs, first = std::move(first)] { Process(rs, first); });
    }
    if (rs->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(rs);
  };
  absl::Status s = ReadInputs(rs, item);
  run->ctx = std::make_unique<OpKernelContext>(MakeParams(rs, item, absl::MakeSpan(run->outputs)));
  if (!s.ok()) {
    done(s);
    return;
  }
  item.kernel->AsAsync()->ComputeAsync(run->ctx.get(), std::move(done));
}

void ExecutorImpl::Process(RunState* rs, absl::Span<const int> first) const {
  // A stack: the first items are pushed so that they run in the given order.
  ReadyStack inline_ready(first.rbegin(), first.rend());
  absl::InlinedVector<TensorValue, 4> outputs;
  StepStatsCollector* stats = rs->args.stats;
  while (!inline_ready.empty()) {
    const int id = inline_ready.back();
    inline_ready.pop_back();
    const NodeItem& item = items_[id];
    if (!Aborted(rs)) {
      if (item.is_async) {
        LaunchAsync(rs, id);  // its completion accounts for it in `outstanding`
        continue;
      }
      int64_t start_us = stats ? stats->NowMicros() : 0;
      outputs.resize(item.num_outputs);
      absl::Status s = ReadInputs(rs, item);
      OpKernelContext ctx(MakeParams(rs, item, absl::MakeSpan(outputs)));
      if (s.ok()) s = item.kernel->Compute(&ctx);
      ReleaseInputs(rs, item);  // early, so buffers can be reused in place
      if (stats) RecordStats(rs, item, start_us, outputs, ctx);
      Propagate(rs, item, s, outputs, &inline_ready);
      outputs.clear();
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
