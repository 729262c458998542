#include "distributed/worker.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "distributed/call_pool.h"
#include "distributed/random_id.h"
#include "distributed/variable_budget.h"
#include "distributed/remote_rendezvous.h"
#include "distributed/rpc/recv_buffer_pool.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "runtime/executor.h"
#include "runtime/step_gate.h"
#include "runtime/stateful_kernels.h"
#include "runtime/step_partitions.h"
#include "runtime/thread_pool.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace {

// A step's rendezvous is forgotten this long after its last use when the
// master never sends CleanupStep (it crashed, or the step was abandoned).
constexpr absl::Duration kStepTtl = absl::Minutes(5);
constexpr absl::Duration kSweepInterval = absl::Seconds(10);
// Freed pushed tensors (collective chunks) kept for the next push.
constexpr int64_t kPushPoolBytes = 256 << 20;

// What RegisterGraph built: the partitions' executors (the step engine's,
// as a local session's), and the call frame slots their _Arg / _Retval
// nodes use (indices are the client graph's, so a task's may have gaps).
struct RegisteredGraph {
  std::string session_handle;
  // The session's stateful kernels, shared by all its graphs on this task.
  std::shared_ptr<StatefulKernels> stateful_kernels;
  std::unique_ptr<StepPartitions> partitions;
  std::map<int, std::pair<std::string, DataType>> args;  // index -> (_Arg node, dtype)
  std::map<int, std::string> retvals;                    // index -> _Retval node
  int frame_args = 0;                                    // max _Arg index + 1
  int frame_retvals = 0;                                 // max _Retval index + 1
};

struct StepEntry {
  std::shared_ptr<RemoteRendezvous> rendezvous;
  absl::Time last_used;
};

// One RunGraph call, shared with the step's done callback so that a call
// that times out can return while its executors wind down.
struct RunState {
  std::shared_ptr<const RegisteredGraph> graph;
  std::shared_ptr<RemoteRendezvous> rendezvous;
  CallFrame frame;
  absl::Status status;  // written before all_done is notified
  absl::Notification all_done;
};

int64_t NewIncarnation() {
  absl::BitGen gen;
  int64_t v = 0;
  while (v == 0) v = static_cast<int64_t>(absl::Uniform<uint64_t>(gen) >> 1);
  return v;
}

}  // namespace

class Worker::Impl {
 public:
  explicit Impl(const WorkerOptions& options)
      : options_(options),
        incarnation_(NewIncarnation()),
        call_pool_(absl::StrCat("recv", options.task)),
        push_pool_(std::make_shared<RecvBufferPool>(kPushPoolBytes)),
        collective_transport_(options.peers == nullptr
                                  ? nullptr
                                  : std::make_unique<RpcCollectiveTransport>(
                                        options.task, &mailbox_, options.peers,
                                        options.collective_transport)),
        collectives_(std::make_unique<CollectiveExecutor>(
            collective_transport_ != nullptr
                ? static_cast<CollectiveTransport*>(collective_transport_.get())
                : &mailbox_,
            options.session.backends)) {}
  ~Impl();

  absl::Status Init();

  absl::StatusOr<WorkerInfo> GetStatus();
  absl::StatusOr<std::string> RegisterGraph(
      const std::string& session_handle,
      const std::map<std::string, tensorflow::GraphDef>& partitions);
  absl::Status DeregisterGraph(const std::string& graph_handle);
  absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals);
  absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key, int64_t timeout_ms);
  absl::Status AbortStep(int64_t step_id, const absl::Status& reason);
  absl::Status CleanupStep(int64_t step_id);
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value,
                              const std::string& sender);

  const std::string& task() const { return options_.task; }
  std::vector<Device*> devices() const;
  Allocator* push_allocator() const { return push_pool_.get(); }
  Tensor TakeLanding(const std::string& to_device, const std::string& key) {
    return mailbox_.TakeLanding(to_device, key);
  }
  CollectiveExecutor* collective_executor() const { return collectives_.get(); }

 private:
  // Records the _Arg / _Retval slots of one registered partition.
  absl::Status AddFrameSlots(const StepPartitions::Part& part, RegisteredGraph* graph) const;
  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> FindGraph(const std::string& handle);
  // Unregisters the graphs unused for graph_idle_ttl (checked at most every
  // minute); the caller destroys them after releasing graphs_mu_.
  std::vector<std::shared_ptr<const RegisteredGraph>> DropIdleGraphs()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(graphs_mu_);
  // The stateful kernels of a master session's graphs on this task: one
  // set while any of its graphs is registered.
  std::shared_ptr<StatefulKernels> StatefulKernelsOf(const std::string& session_handle);
  absl::Status CheckRunArgs(const RegisteredGraph& graph, const RunGraphArgs& args) const;
  // The step's rendezvous, made on first use; also forgets stale steps.
  // nullptr once CleanupStep has ended it as a failed step.
  std::shared_ptr<RemoteRendezvous> GetOrCreateStep(int64_t step_id);
  absl::Status StepIsOver(int64_t step_id) const {
    return WithTask(absl::AbortedError(absl::StrCat("step ", step_id, " is over")));
  }
  // Starts the step's partitions; when they are done, `state->all_done`.
  void StartPartitions(const std::shared_ptr<RunState>& state, int64_t step_id);
  absl::Status WithTask(const absl::Status& s) const {
    return AddContext(s, absl::StrCat("task ", options_.task));
  }

  const WorkerOptions options_;
  const int64_t incarnation_;
  // Declared first, destroyed last: executors and rendezvous use them.
  std::vector<std::unique_ptr<Device>> devices_;
  std::map<std::string, Device*> device_by_name_;
  // Steps pass it shared, a step that records (runtime/step_replay.h)
  // alone; used when a device can record and capture_steps is on.
  StepGate step_gate_;
  bool capture_steps_ = false;
  CallPool call_pool_;  // remote fetches; outlives every rendezvous below
  // Collectives: pushed values land in push_pool_ memory and wait in
  // mailbox_; the executor runs the partitions' collective ops over the
  // transport (the mailbox alone without peers). Destroyed in reverse:
  // executor, transport, mailbox, pool (tensors keep the pool alive).
  std::shared_ptr<RecvBufferPool> push_pool_;
  CollectiveMailbox mailbox_;
  std::unique_ptr<RpcCollectiveTransport> collective_transport_;
  std::unique_ptr<CollectiveExecutor> collectives_;

  // Three jobs, one lock each, never nested: the graph registry, the step
  // table and the count of running partitions.
  absl::Mutex graphs_mu_;
  std::map<std::string, std::shared_ptr<const RegisteredGraph>> graphs_
      ABSL_GUARDED_BY(graphs_mu_);
  std::map<std::string, absl::Time> graph_last_used_ ABSL_GUARDED_BY(graphs_mu_);
  absl::Time next_graph_sweep_ ABSL_GUARDED_BY(graphs_mu_) = absl::Now();
  std::map<std::string, std::weak_ptr<StatefulKernels>> stateful_kernels_
      ABSL_GUARDED_BY(graphs_mu_);

  absl::Mutex steps_mu_;
  std::map<int64_t, StepEntry> steps_ ABSL_GUARDED_BY(steps_mu_);
  // Failed steps CleanupStep ended, and when: a peer's RecvTensor that
  // arrives later (it was in flight when the step failed) is refused at once
  // instead of waiting, in a fresh rendezvous, for a tensor nobody will
  // send. A step that succeeded has served all its transfers before its
  // cleanup, so only failed ones (aborted here) are remembered.
  std::map<int64_t, absl::Time> finished_steps_ ABSL_GUARDED_BY(steps_mu_);
  absl::Time last_sweep_ ABSL_GUARDED_BY(steps_mu_) = absl::Now();

  absl::Mutex runs_mu_;
  int runs_in_flight_ ABSL_GUARDED_BY(runs_mu_) = 0;  // RunStates whose executors still run

  // Set (under steps_mu_, so that no step is made after the destructor's
  // snapshot without seeing it) when the worker starts to go.
  std::atomic<bool> shutting_down_{false};
  // Runs the steps that may be recorded or replayed (synchronous), so that
  // RunGraph's deadline covers them as it covers the others. Last: its
  // threads end first, after the destructor saw no run in flight.
  ThreadPool replay_pool_{"replay", 2};
};

absl::Status Worker::Impl::Init() {
  if (options_.session.ops == nullptr || options_.session.kernels == nullptr) {
    return absl::InvalidArgumentError("WorkerOptions needs ops and kernels registries");
  }
  if (options_.task.empty() || TaskOfDevice(options_.task) != options_.task) {
    return absl::InvalidArgumentError(absl::StrCat(
        "WorkerOptions.task '", options_.task, "' is not a task name like /job:ps/replica:0/task:0"));
  }
  LocalDevicesOptions local = options_.session.devices;
  local.name_prefix = options_.task;
  ASSIGN_OR_RETURN(devices_, CreateDevices(options_.session.backends, local));
  for (const auto& d : devices_) {
    device_by_name_[d->name()] = d.get();
    capture_steps_ |= options_.session.capture_steps && d->can_capture();
  }
  return absl::OkStatus();
}

Worker::Impl::~Impl() {
  std::vector<std::shared_ptr<RemoteRendezvous>> steps;
  {
    absl::MutexLock lock(&steps_mu_);
    shutting_down_ = true;
    for (auto& [id, entry] : steps_) steps.push_back(entry.rendezvous);
  }
  const absl::Status reason =
      absl::CancelledError(absl::StrCat("task ", options_.task, " is shutting down"));
  for (auto& r : steps) r->StartAbort(reason);
  // Collective ops waiting for peers end now rather than at their deadline.
  collectives_->transport()->Abort("", reason);
  absl::MutexLock lock(&runs_mu_);
  runs_mu_.Await(absl::Condition(
      +[](int* n) { return *n == 0; }, &runs_in_flight_));
  // Members go in reverse order: steps (each waits for its fetches), graphs,
  // the call pool, then the devices.
}

std::vector<Device*> Worker::Impl::devices() const {
  std::vector<Device*> out;
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

absl::StatusOr<WorkerInfo> Worker::Impl::GetStatus() {
  WorkerInfo info;
  info.task = options_.task;
  info.incarnation = incarnation_;
  for (const auto& d : devices_) {
    DeviceInfo di;
    di.name = d->name();
    di.device_type = d->device_type();
    di.memory_limit = d->allocator()->GetStats().bytes_limit;
    info.devices.push_back(std::move(di));
  }
  return info;
}

absl::Status Worker::Impl::AddFrameSlots(const StepPartitions::Part& part,
                                         RegisteredGraph* graph) const {
  const std::string context = absl::StrCat("partition for ", part.device->name());
  for (const tensorflow::NodeDef& n : part.def.node()) {
    const bool is_arg = n.op() == kArgOp;
    if (!is_arg && n.op() != kRetvalOp) continue;
    ASSIGN_OR_RETURN(int64_t index, GetAttr<int64_t>(n.attr(), "index"));
    if (index < 0 || index > (1 << 20)) {
      return absl::InvalidArgumentError(
          absl::StrCat(context, ": node '", n.name(), "' has index ", index));
    }
    const int i = static_cast<int>(index);
    bool fresh;
    if (is_arg) {
      ASSIGN_OR_RETURN(DataType dtype, GetAttr<DataType>(n.attr(), "T"));
      fresh = graph->args.emplace(i, std::make_pair(n.name(), dtype)).second;
      graph->frame_args = std::max(graph->frame_args, i + 1);
    } else {
      fresh = graph->retvals.emplace(i, n.name()).second;
      graph->frame_retvals = std::max(graph->frame_retvals, i + 1);
    }
    if (!fresh) {
      return absl::InvalidArgumentError(absl::StrCat(
          context, ": node '", n.name(), "' reuses ", n.op(), " index ", i));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Worker::Impl::RegisterGraph(
    const std::string& session_handle,
    const std::map<std::string, tensorflow::GraphDef>& partitions) {
  if (partitions.empty()) {
    return WithTask(absl::InvalidArgumentError(
        absl::StrCat("session ", session_handle, " registered a graph with no partitions")));
  }
  RETURN_IF_ERROR(
      CheckVariableBudget(partitions, options_.variable_memory_budget_bytes, options_.task));
  std::vector<PartitionGraph> graphs;
  for (const auto& [device_name, def] : partitions) {
    auto it = device_by_name_.find(device_name);
    if (it == device_by_name_.end()) {
      std::vector<std::string> names;
      for (const auto& [name, d] : device_by_name_) names.push_back(name);
      return WithTask(absl::InvalidArgumentError(absl::StrCat(
          "partition for device '", device_name, "': not a device of task ", options_.task,
          " (its devices: ", absl::StrJoin(names, ", "), ")")));
    }
    PartitionGraph g;
    g.device = it->second;
    g.def = def;
    graphs.push_back(std::move(g));
  }
  auto graph = std::make_shared<RegisteredGraph>();
  graph->session_handle = session_handle;
  graph->stateful_kernels = StatefulKernelsOf(session_handle);
  StepPartitionsOptions capture;
  capture.capture_steps = capture_steps_;
  capture.gate = capture_steps_ ? &step_gate_ : nullptr;
  capture.stateful_kernels = graph->stateful_kernels.get();
  absl::StatusOr<std::unique_ptr<StepPartitions>> built = StepPartitions::Build(
      std::move(graphs), options_.session.ops, *options_.session.kernels, capture);
  RETURN_IF_ERROR(WithTask(built.status()));
  graph->partitions = *std::move(built);
  for (const StepPartitions::Part& part : graph->partitions->parts()) {
    RETURN_IF_ERROR(WithTask(AddFrameSlots(part, graph.get())));
  }
  std::vector<std::shared_ptr<const RegisteredGraph>> dropped;  // destroyed after the lock
  absl::MutexLock lock(&graphs_mu_);
  // Unguessable (a capability: no other client can run or deregister the
  // graph); the incarnation keeps a restarted task from accepting a handle
  // its previous life gave out.
  std::string handle = absl::StrCat("graph/", RandomId128(), "/", absl::Hex(incarnation_));
  graphs_[handle] = std::move(graph);
  graph_last_used_[handle] = absl::Now();
  dropped = DropIdleGraphs();
  return handle;
}

std::vector<std::shared_ptr<const RegisteredGraph>> Worker::Impl::DropIdleGraphs() {
  std::vector<std::shared_ptr<const RegisteredGraph>> dropped;
  const absl::Time now = absl::Now();
  if (now < next_graph_sweep_) return dropped;
  next_graph_sweep_ = now + std::min(options_.graph_idle_ttl / 4, absl::Minutes(1));
  for (auto it = graph_last_used_.begin(); it != graph_last_used_.end();) {
    if (now - it->second > options_.graph_idle_ttl) {
      auto g = graphs_.find(it->first);
      if (g != graphs_.end()) {
        dropped.push_back(std::move(g->second));
        graphs_.erase(g);
      }
      it = graph_last_used_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

std::shared_ptr<StatefulKernels> Worker::Impl::StatefulKernelsOf(
    const std::string& session_handle) {
  absl::MutexLock lock(&graphs_mu_);
  for (auto it = stateful_kernels_.begin(); it != stateful_kernels_.end();) {
    it = it->second.expired() ? stateful_kernels_.erase(it) : std::next(it);
  }
  std::shared_ptr<StatefulKernels> kernels = stateful_kernels_[session_handle].lock();
  if (kernels == nullptr) {
    kernels = std::make_shared<StatefulKernels>();
    stateful_kernels_[session_handle] = kernels;
  }
  return kernels;
}

absl::Status Worker::Impl::DeregisterGraph(const std::string& graph_handle) {
  std::shared_ptr<const RegisteredGraph> graph;  // destroyed outside the lock
  absl::MutexLock lock(&graphs_mu_);
  auto it = graphs_.find(graph_handle);
  if (it == graphs_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", options_.task, ": graph handle ",
                                            graph_handle, " is not registered"));
  }
  graph = std::move(it->second);
  graphs_.erase(it);
  graph_last_used_.erase(graph_handle);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const RegisteredGraph>> Worker::Impl::FindGraph(
    const std::string& handle) {
  if (shutting_down_) {
    return absl::UnavailableError(absl::StrCat("task ", options_.task, " is shutting down"));
  }
  absl::MutexLock lock(&graphs_mu_);
  auto it = graphs_.find(handle);
  if (it != graphs_.end()) graph_last_used_[handle] = absl::Now();
  if (it == graphs_.end()) {
    // Aborted, as TensorFlow does: the master re-registers and retries.
    return absl::AbortedError(
        absl::StrCat("task ", options_.task, ": graph handle ", handle,
                     " is not registered (the task restarted, or the graph sat unused past its "
                     "idle limit)"));
  }
  return it->second;
}

absl::Status Worker::Impl::CheckRunArgs(const RegisteredGraph& graph,
                                        const RunGraphArgs& args) const {
  for (const auto& [index, value] : args.feeds) {
    auto it = graph.args.find(index);
    if (it == graph.args.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("step ", args.step_id, ": feed ", index, " has no _Arg in graph ",
                       args.graph_handle));
    }
    if (value.dtype() != it->second.second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "step ", args.step_id, ": feed ", index, " for node '", it->second.first, "' is ",
          DataTypeName(value.dtype()), ", expected ", DataTypeName(it->second.second)));
    }
  }
  for (const auto& [index, arg] : graph.args) {
    if (args.feeds.count(index) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("step ", args.step_id, ": node '",
                                                     arg.first, "' (_Arg ", index,
                                                     ") was not fed"));
    }
  }
  for (int index : args.retval_indices) {
    if (graph.retvals.count(index) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("step ", args.step_id, ": graph ",
                                                     args.graph_handle, " has no _Retval ", index));
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<RemoteRendezvous> Worker::Impl::GetOrCreateStep(int64_t step_id) {
  std::vector<std::shared_ptr<RemoteRendezvous>> stale;  // destroyed outside the lock
  std::shared_ptr<RemoteRendezvous> out;
  {
    absl::MutexLock lock(&steps_mu_);
    const absl::Time now = absl::Now();
    if (now - last_sweep_ > kSweepInterval) {
      last_sweep_ = now;
      for (auto it = steps_.begin(); it != steps_.end();) {
        // A step some RunGraph still holds is not stale, however old.
        if (now - it->second.last_used > kStepTtl && it->second.rendezvous.use_count() == 1) {
          stale.push_back(std::move(it->second.rendezvous));
          it = steps_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto it = finished_steps_.begin(); it != finished_steps_.end();) {
        it = now - it->second > kStepTtl ? finished_steps_.erase(it) : std::next(it);
      }
    }
    if (finished_steps_.count(step_id) != 0) return nullptr;
    StepEntry& entry = steps_[step_id];
    if (entry.rendezvous == nullptr) {
      entry.rendezvous = std::make_shared<RemoteRendezvous>(
          step_id, options_.task, options_.peers, &call_pool_, options_.default_timeout_ms);
      if (shutting_down_) {
        entry.rendezvous->StartAbort(
            absl::CancelledError(absl::StrCat("task ", options_.task, " is shutting down")));
      }
    }
    entry.last_used = now;
    out = entry.rendezvous;
  }
  return out;
}

void Worker::Impl::StartPartitions(const std::shared_ptr<RunState>& state, int64_t step_id) {
  Executor::Args args;
  args.step_id = step_id;
  args.call_frame = &state->frame;
  args.rendezvous = state->rendezvous.get();
  args.collective_executor = collectives_.get();
  args.run_inline = options_.session.inter_op_parallelism == 1;
  {
    absl::MutexLock lock(&runs_mu_);
    ++runs_in_flight_;
  }
  auto finish = [this, state](absl::Status s) {
    // Let go of the executors and the rendezvous here, before the worker
    // may be destroyed (it waits for runs_in_flight_), not whenever the
    // last reference to `state` goes. RunGraph holds its own references.
    std::shared_ptr<const RegisteredGraph> graph = std::move(state->graph);
    std::shared_ptr<RemoteRendezvous> rendezvous = std::move(state->rendezvous);
    state->status = std::move(s);
    state->all_done.Notify();
    rendezvous = nullptr;
    graph = nullptr;
    absl::MutexLock lock(&runs_mu_);
    --runs_in_flight_;
  };
  const StepPartitions& partitions = *state->graph->partitions;
  if (partitions.replayable()) {
    // One partition that may be recorded or replayed (a GPU's, with no
    // transfers: a step with _Send/_Recv is never recorded) runs to its end
    // on a thread of its own, while RunGraph waits with its deadline.
    replay_pool_.Schedule([state, args, finish = std::move(finish)] {
      bool replayed = false;
      finish(state->graph->partitions->RunStep(args, &replayed));
    });
    return;
  }
  partitions.RunAsync(args, std::move(finish));
}

absl::Status Worker::Impl::RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) {
  absl::StatusOr<std::shared_ptr<const RegisteredGraph>> found = FindGraph(args.graph_handle);
  absl::Status refused = found.ok() ? WithTask(CheckRunArgs(**found, args)) : found.status();
  std::shared_ptr<RemoteRendezvous> rendezvous = GetOrCreateStep(args.step_id);
  if (rendezvous == nullptr) return StepIsOver(args.step_id);
  if (!refused.ok()) {
    // This task's share of the step will never run: peers fetching from it
    // (their RecvTensor may come before or after this) fail at once.
    rendezvous->StartAbort(refused);
    return refused;
  }
  std::shared_ptr<const RegisteredGraph> graph = *std::move(found);
  if (rendezvous->aborted()) {
    return WithTask(AddContext(rendezvous->abort_status(),
                               absl::StrCat("step ", args.step_id, " was aborted")));
  }
  auto state = std::make_shared<RunState>();
  state->graph = graph;
  state->rendezvous = rendezvous;
  state->frame.args.resize(graph->frame_args);
  for (const auto& [index, value] : args.feeds) state->frame.args[index] = value;
  state->frame.retvals.resize(graph->frame_retvals);
  StartPartitions(state, args.step_id);

  const int64_t timeout_ms = std::min(
      args.timeout_ms > 0 ? args.timeout_ms : options_.default_timeout_ms, options_.max_timeout_ms);
  if (!state->all_done.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) {
    absl::Status deadline = absl::DeadlineExceededError(
        absl::StrCat("task ", options_.task, ": step ", args.step_id, " did not finish within ",
                     timeout_ms, " ms"));
    // Stops this task's partitions; the executors finish on their own
    // threads and `state` lives until they do.
    rendezvous->StartAbort(deadline);
    return deadline;
  }
  // The root cause: the first failure here, or the master's AbortStep.
  const absl::Status& status = state->status;
  if (!status.ok()) {
    return WithTask(AddContext(status, absl::StrCat("step ", args.step_id)));
  }
  for (int index : args.retval_indices) {
    const Tensor& t = state->frame.retvals[index];
    if (!t.IsInitialized()) {
      return WithTask(absl::InternalError(
          absl::StrCat("step ", args.step_id, ": node '", graph->retvals.at(index),
                       "' (_Retval ", index, ") produced no value")));
    }
    (*retvals)[index] = t;
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Worker::Impl::RecvTensor(int64_t step_id, const std::string& key,
                                                int64_t timeout_ms) {
  absl::StatusOr<Rendezvous::ParsedKey> parsed = Rendezvous::ParseKey(key);
  if (!parsed.ok()) return WithTask(parsed.status());
  if (parsed->step_id != step_id) {
    return WithTask(absl::InvalidArgumentError(
        absl::StrCat("RecvTensor for step ", step_id, " names step ", parsed->step_id, " in its key '",
                     key, "'")));
  }
  if (TaskOfDevice(parsed->src_device) != options_.task) {
    return WithTask(absl::InvalidArgumentError(absl::StrCat(
        "RecvTensor key '", key, "' names a sending device of another task")));
  }
  std::shared_ptr<RemoteRendezvous> rendezvous = GetOrCreateStep(step_id);
  if (rendezvous == nullptr) return StepIsOver(step_id);
  if (timeout_ms <= 0) timeout_ms = options_.default_timeout_ms;
  timeout_ms = std::min(timeout_ms, options_.max_timeout_ms);
  absl::StatusOr<Tensor> out = rendezvous->WaitForLocal(key, timeout_ms);
  if (!out.ok()) return WithTask(out.status());
  return out;
}

absl::Status Worker::Impl::AbortStep(int64_t step_id, const absl::Status& reason) {
  // Made when missing, so that a RunGraph or RecvTensor of the step arriving
  // after the abort fails at once rather than running.
  std::shared_ptr<RemoteRendezvous> rendezvous = GetOrCreateStep(step_id);
  if (rendezvous == nullptr) return absl::OkStatus();  // already over
  rendezvous->StartAbort(
      reason.ok() ? absl::CancelledError(absl::StrCat("step ", step_id, " cancelled")) : reason);
  return absl::OkStatus();
}

absl::Status Worker::Impl::CleanupStep(int64_t step_id) {
  std::shared_ptr<RemoteRendezvous> gone;  // may wait for fetches: outside the lock
  {
    absl::MutexLock lock(&steps_mu_);
    auto it = steps_.find(step_id);
    if (it != steps_.end()) {
      gone = std::move(it->second.rendezvous);
      steps_.erase(it);
    }
    if (gone == nullptr || gone->aborted()) finished_steps_[step_id] = absl::Now();
    if (gone == nullptr) return absl::OkStatus();
  }
  // A peer's RecvTensor may still wait in it (its step failed elsewhere
  // before this task sent the tensor): nothing will be sent any more, so
  // it is told now rather than at its deadline.
  gone->StartAbort(absl::CancelledError(absl::StrCat("step ", step_id, " was cleaned up")));
  return absl::OkStatus();
}

absl::Status Worker::Impl::CollectivePush(const std::string& to_device, const std::string& key,
                                          const Tensor& value, const std::string& sender) {
  if (device_by_name_.count(to_device) == 0) {
    return WithTask(absl::InvalidArgumentError(absl::StrCat(
        "collective message '", key, "' is for ", to_device, ", not a device of this task")));
  }
  return WithTask(mailbox_.Deliver(to_device, key, value, sender));
}

// ---- Worker ----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(const WorkerOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Worker::~Worker() = default;

absl::StatusOr<WorkerInfo> Worker::GetStatus() { return impl_->GetStatus(); }
absl::StatusOr<std::string> Worker::RegisterGraph(
    const std::string& session_handle,
    const std::map<std::string, tensorflow::GraphDef>& partitions) {
  return impl_->RegisterGraph(session_handle, partitions);
}
absl::Status Worker::DeregisterGraph(const std::string& graph_handle) {
  return impl_->DeregisterGraph(graph_handle);
}
absl::Status Worker::RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) {
  return impl_->RunGraph(args, retvals);
}
absl::StatusOr<Tensor> Worker::RecvTensor(int64_t step_id, const std::string& key,
                                          int64_t timeout_ms) {
  return impl_->RecvTensor(step_id, key, timeout_ms);
}
absl::Status Worker::AbortStep(int64_t step_id, const absl::Status& reason) {
  return impl_->AbortStep(step_id, reason);
}
absl::Status Worker::CleanupStep(int64_t step_id) { return impl_->CleanupStep(step_id); }
absl::Status Worker::CollectivePush(const std::string& to_device, const std::string& key,
                                    const Tensor& value, int64_t /*timeout_ms*/) {
  return impl_->CollectivePush(to_device, key, value, /*sender=*/"");
}
absl::Status Worker::AcceptCollectivePush(const std::string& to_device, const std::string& key,
                                          Tensor value, int64_t /*timeout_ms*/,
                                          const std::string& sender) {
  return impl_->CollectivePush(to_device, key, value, sender);
}
Allocator* Worker::PushAllocator() { return impl_->push_allocator(); }
Tensor Worker::LandingFor(const std::string& to_device, const std::string& key) {
  return impl_->TakeLanding(to_device, key);
}
CollectiveExecutor* Worker::collective_executor() const { return impl_->collective_executor(); }
const std::string& Worker::task() const { return impl_->task(); }
std::vector<Device*> Worker::devices() const { return impl_->devices(); }

}  // namespace sluice
