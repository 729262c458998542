// The run loop: a step's state, running ready nodes (inline or on the
// device's pool), asynchronous kernels' completion and the first error. The
// per-graph layout is runtime/executor_layout.h; frames, iterations and dead
// tensors are runtime/frame_propagator.h.
#include "runtime/executor.h"

#include <atomic>
#include <functional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/status_macros.h"
#include "runtime/compute_pool.h"
#include "runtime/executor_layout.h"
#include "runtime/frame_propagator.h"

namespace sluice {
namespace {

using internal::ExecutorLayout;
using internal::FramePropagator;
using internal::NodeItem;
using internal::ReadyNodes;
using internal::TaggedNode;

TaggedNode Dead(TaggedNode t) {
  t.dead = true;
  return t;
}

// The state of one Run.
struct RunState {
  RunState(const ExecutorLayout* layout, const Executor::Args& a,
           std::function<void(absl::Status)> d)
      : args(a), done(std::move(d)), propagator(layout) {}

  Executor::Args args;
  std::function<void(absl::Status)> done;
  FramePropagator propagator;
  std::atomic<int> outstanding{0};  // nodes ready or running, in every frame
  std::atomic<bool> aborted{false};
  absl::Mutex mu;
  absl::Status status ABSL_GUARDED_BY(mu);
};

class ExecutorImpl : public Executor {
 public:
  explicit ExecutorImpl(std::unique_ptr<const ExecutorLayout> layout)
      : layout_(std::move(layout)), device_(layout_->device()) {}

  void RunAsync(const Args& args, std::function<void(absl::Status)> done) override;
  const Graph& graph() const override { return layout_->graph(); }
  const OpKernel* KernelOf(const Node& node) const override {
    return layout_->item(layout_->item_of(node)).kernel.get();
  }
  bool InputOnHost(const Node& node, int input) const override {
    const NodeItem& item = layout_->item(layout_->item_of(node));
    return input >= 0 && static_cast<size_t>(input) < item.input_on_host.size() &&
           item.input_on_host[input] != 0;
  }

 private:
  struct AsyncRun;

  // Runs the `first` nodes and then, inline, whatever they make ready that is
  // cheap (and one expensive node); the rest goes to the device's pool.
  void Process(RunState* rs, absl::Span<const TaggedNode> first) const;

  // Takes the current value of variables arriving on non-ref inputs, and on
  // a device with device memory moves each input to the memory its kernel
  // wants it in.
  // *copies: how many inputs were moved between host and device memory.
  absl::Status ReadInputs(RunState* rs, const NodeItem& item, TensorValue* inputs,
                          int* copies) const;
  absl::Status MoveToKernelMemory(const NodeItem& item, int k, Tensor* t) const;
  OpKernelContext::Params MakeParams(RunState* rs, const TaggedNode& t, TensorValue* inputs,
                                     absl::Span<TensorValue> outputs) const;
  void ReleaseInputs(const NodeItem& item, TensorValue* inputs) const;
  void RecordStats(RunState* rs, const NodeItem& item, int64_t start_us, int input_copies,
                   absl::Span<const TensorValue> outputs, const OpKernelContext& ctx) const;

  // A node has finished with status `s`: on error fails the run; else the
  // propagator appends the nodes it makes ready to `ready`, which are
  // counted as outstanding and dispatched.
  void Propagate(RunState* rs, const TaggedNode& t, const absl::Status& s,
                 absl::Span<const TensorValue> outputs, ReadyNodes* ready) const;
  // Keeps the cheap nodes pushed since `from` and, on one of the device's
  // threads, one expensive node for this thread; schedules the other
  // expensive ones on the pool.
  void Dispatch(RunState* rs, ReadyNodes* ready, size_t from) const;
  bool KeepsExpensiveNodes(const RunState* rs) const;

  void LaunchAsync(RunState* rs, const TaggedNode& t) const;
  // Records the run's first error and aborts the step's rendezvous.
  void Fail(RunState* rs, const absl::Status& s) const;
  bool Aborted(RunState* rs) const;
  void Finish(RunState* rs) const;

  const std::unique_ptr<const ExecutorLayout> layout_;
  Device* const device_;
};

void ExecutorImpl::RunAsync(const Args& args, std::function<void(absl::Status)> done) {
  auto* rs = new RunState(layout_.get(), args, std::move(done));
  absl::Span<const int> roots = layout_->roots();
  if (roots.empty()) {
    Finish(rs);
    return;
  }
  rs->outstanding.store(static_cast<int>(roots.size()));
  // Cheap roots (constants, arguments) run here; of the expensive ones the
  // first runs here too (when this is one of the device's threads) and the
  // rest go to the pool.
  absl::InlinedVector<TaggedNode, 16> here;
  const bool may_keep = KeepsExpensiveNodes(rs);
  bool kept_expensive = false;
  for (int r : roots) {
    const TaggedNode t = rs->propagator.RootNode(r);
    const bool expensive = layout_->item(r).expensive;
    if (!expensive || (may_keep && !kept_expensive) || args.run_inline) {
      kept_expensive |= expensive;
      here.push_back(t);
    } else {
      device_->thread_pool()->Schedule([this, rs, t] { Process(rs, {t}); });
    }
  }
  // With nothing here, the step may already be finished (and rs freed).
  if (!here.empty()) Process(rs, here);
}

absl::Status ExecutorImpl::ReadInputs(RunState* rs, const NodeItem& item, TensorValue* inputs,
                                      int* copies) const {
  *copies = 0;
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
      const bool was_on_device = v.tensor.on_device();
      RETURN_IF_ERROR(MoveToKernelMemory(item, k, &v.tensor));
      if (v.tensor.on_device() != was_on_device) ++*copies;
    }
  }
  return absl::OkStatus();
}

absl::Status ExecutorImpl::MoveToKernelMemory(const NodeItem& item, int k, Tensor* t) const {
  if (!t->IsInitialized() || HoldsObjects(t->dtype())) return absl::OkStatus();
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
  const NodeItem& item = layout_->item(t.id);
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
  params.function_runtime = layout_->function_runtime();
  if (!item.output_on_host.empty()) params.output_on_host = item.output_on_host.data();
  params.host_kernel = item.host_kernel;
  return params;
}

void ExecutorImpl::ReleaseInputs(const NodeItem& item, TensorValue* inputs) const {
  for (int k = 0; k < item.num_inputs; ++k) inputs[k] = TensorValue();
}

void ExecutorImpl::RecordStats(RunState* rs, const NodeItem& item, int64_t start_us,
                               int input_copies, absl::Span<const TensorValue> outputs,
                               const OpKernelContext& ctx) const {
  StepStatsCollector* stats = rs->args.stats;
  NodeExecStats n;
  n.node_name = item.node->name();
  n.op = item.node->op();
  n.device = device_->name();
  n.start_us = start_us;
  n.end_us = stats->NowMicros();
  n.input_copies = input_copies;
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

// A thread that is not the device's (the session's caller, or another
// device's thread completing a transfer) runs no expensive node of this
// device: the device's kernels then use exactly its pool, its share of the
// cores (runtime/compute_pool.h), and devices compute at once without
// oversubscribing. run_inline steps run everything on the caller by request.
bool ExecutorImpl::KeepsExpensiveNodes(const RunState* rs) const {
  const ThreadPool* pool = device_->thread_pool();
  return rs->args.run_inline || pool == nullptr || pool->InPool();
}

void ExecutorImpl::Dispatch(RunState* rs, ReadyNodes* ready, size_t from) const {
  if (rs->args.run_inline || ready->size() <= from) return;
  // The one expensive node kept here runs after the cheap ones.
  size_t kept = from;
  const bool may_keep = KeepsExpensiveNodes(rs);
  bool kept_expensive = false;
  TaggedNode expensive{};
  for (size_t i = from; i < ready->size(); ++i) {
    const TaggedNode t = (*ready)[i];
    if (!layout_->item(t.id).expensive || t.dead) {
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
                             absl::Span<const TensorValue> outputs, ReadyNodes* ready) const {
  if (!s.ok()) {
    Fail(rs, AddContext(s, absl::StrCat("node ", layout_->item(t.id).node->DebugName())));
    return;
  }
  const size_t from = ready->size();
  absl::Status propagated = rs->propagator.Propagate(t, outputs, ready);
  if (!propagated.ok()) Fail(rs, propagated);
  // Counted before any of them can run (on the pool) and finish.
  const int activated = static_cast<int>(ready->size() - from);
  if (activated > 0) rs->outstanding.fetch_add(activated, std::memory_order_relaxed);
  Dispatch(rs, ready, from);
}

// The state of an asynchronous kernel between ComputeAsync and its done.
struct ExecutorImpl::AsyncRun {
  std::vector<TensorValue> outputs;
  std::unique_ptr<OpKernelContext> ctx;
  int64_t start_us = 0;
  int input_copies = 0;
};

void ExecutorImpl::LaunchAsync(RunState* rs, const TaggedNode& t) const {
  const NodeItem& item = layout_->item(t.id);
  TensorValue* inputs = t.iter->slots.data() + item.input_start;
  auto* run = new AsyncRun;
  run->outputs.resize(item.num_outputs);
  run->start_us = rs->args.stats ? rs->args.stats->NowMicros() : 0;
  auto done = [this, rs, t, inputs, run](absl::Status s) {
    const NodeItem& item = layout_->item(t.id);
    ReleaseInputs(item, inputs);
    if (rs->args.stats) {
      RecordStats(rs, item, run->start_us, run->input_copies, run->outputs, *run->ctx);
    }
    ReadyNodes ready;
    // A _Recv that received a dead tensor makes its outputs dead.
    Propagate(rs, run->ctx->is_output_dead() ? Dead(t) : t, s, run->outputs, &ready);
    delete run;
    // Whatever this made ready continues on this device's pool, not on the
    // thread (perhaps another device's) that completed the kernel.
    if (!ready.empty()) {
      std::vector<TaggedNode> first(ready.rbegin(), ready.rend());
      device_->thread_pool()->Schedule(
          [this, rs, first = std::move(first)] { Process(rs, first); });
    }
    if (rs->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(rs);
  };
  absl::Status s = ReadInputs(rs, item, inputs, &run->input_copies);
  run->ctx =
      std::make_unique<OpKernelContext>(MakeParams(rs, t, inputs, absl::MakeSpan(run->outputs)));
  if (!s.ok()) {
    done(s);
    return;
  }
  item.kernel->AsAsync()->ComputeAsync(run->ctx.get(), std::move(done));
}

void ExecutorImpl::Process(RunState* rs, absl::Span<const TaggedNode> first) const {
  // A stack: the first nodes are pushed so that they run in the given order.
  ReadyNodes inline_ready(first.rbegin(), first.rend());
  // Every kernel run here (LaunchAsync's too) is this device's: its inner
  // loops use this device's pool.
  ScopedComputePool compute_pool(device_->thread_pool());
  absl::InlinedVector<TensorValue, 4> outputs;
  StepStatsCollector* stats = rs->args.stats;
  while (!inline_ready.empty()) {
    const TaggedNode t = inline_ready.back();
    inline_ready.pop_back();
    const NodeItem& item = layout_->item(t.id);
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
        int input_copies = 0;
        absl::Status s = ReadInputs(rs, item, inputs, &input_copies);
        // A dead _Send runs: it sends the deadness on (runtime/rendezvous.h).
        OpKernelContext ctx(MakeParams(rs, t, inputs, absl::MakeSpan(outputs)));
        if (s.ok()) s = item.kernel->Compute(&ctx);
        ReleaseInputs(item, inputs);  // early, so buffers can be reused in place
        if (stats) RecordStats(rs, item, start_us, input_copies, outputs, ctx);
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
  return Create(std::move(graph), device, kernels, nullptr);
}

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device,
                                                           const KernelRegistry& kernels,
                                                           FunctionRuntime* function_runtime) {
  return Create(std::move(graph), device, kernels, function_runtime, nullptr);
}

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(std::unique_ptr<Graph> graph,
                                                           Device* device,
                                                           const KernelRegistry& kernels,
                                                           FunctionRuntime* function_runtime,
                                                           StatefulKernels* shared) {
  ASSIGN_OR_RETURN(std::unique_ptr<const ExecutorLayout> layout,
                   ExecutorLayout::Create(std::move(graph), device, kernels, function_runtime,
                                          shared));
  return std::unique_ptr<Executor>(std::make_unique<ExecutorImpl>(std::move(layout)));
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
