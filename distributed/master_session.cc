// The cluster session: client graph -> placement over every task's devices
// -> per-device partitions registered per task -> concurrent RunGraph calls.
#include "distributed/master_session.h"

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "distributed/call_pool.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "session/compile_signature.h"
#include "runtime/client_graph.h"
#include "runtime/device.h"
#include "runtime/frame_ops.h"
#include "session/signature_cache.h"
#include "runtime/step_barrier.h"

namespace sluice {
namespace {

// A device of some task, as the placer sees it: a name, a type and the
// memory limit its task reports.
class ProxyDevice : public Device {
 public:
  explicit ProxyDevice(const DeviceInfo& info)
      : Device(info.name, info.device_type), memory_limit_(info.memory_limit) {}
  Allocator* allocator() override { return nullptr; }
  ThreadPool* thread_pool() override { return nullptr; }
  int64_t memory_limit() override { return memory_limit_; }

 private:
  const int64_t memory_limit_;
};

// One task's share of a compiled run signature: its registered graph and
// the call frame slots it reads and fills.
struct TaskPart {
  std::string task;
  WorkerInterface* worker = nullptr;
  std::string graph_handle;
  std::vector<int> arg_indices;
  std::vector<int> retval_indices;
};

// A compiled run signature (session/compile_signature.h), registered
// with every task it runs on; each task builds its share with the same
// step engine a local session uses.
struct ClusterSignature {
  ClientGraph client;  // feed types and shapes
  std::vector<TaskPart> parts;
  std::vector<GraphDef> partition_graphs;
};

// One step's RunGraph calls, shared with them: the step ends when every
// call has answered, or a grace period after its first failure, so that a
// task which stopped answering (its call waits for the RPC deadline) does
// not hold the step once another task has failed it. The step's error is
// chosen here, by the barrier's rule (the first failure that is no echo,
// StepBarrier::IsEcho, else the first failure), from the failures noted so
// far; every failure is noted before it is reported, so an early and a late
// end name the same cause when they see the same failures. A call that
// answers after the end writes into `results`, which nobody reads then.
class StepCalls {
 public:
  explicit StepCalls(int n) : results(n), done_(n == 0) {}

  // The calls' return values, one map per task; read after Wait returned OK.
  std::vector<std::map<int, Tensor>> results;

  void NoteFailure(const absl::Status& s) {
    absl::MutexLock lock(&mu_);
    if (!failure_.has_value()) {
      failure_ = s;
      first_failure_at_ = absl::Now();
    } else if (StepBarrier::IsEcho(*failure_) && !StepBarrier::IsEcho(s)) {
      failure_ = s;
    }
  }
  // After every call answered (the barrier's done).
  void Finish() {
    absl::MutexLock lock(&mu_);
    done_ = true;
  }
  // OK when every call succeeded; else the chosen failure, once every call
  // answered or `grace` passed after the first failure.
  absl::Status Wait(absl::Duration grace) {
    absl::MutexLock lock(&mu_);
    while (!done_) {
      if (!failure_.has_value()) {
        mu_.Await(absl::Condition(this, &StepCalls::DoneOrFailed));
      } else if (!mu_.AwaitWithDeadline(absl::Condition(&done_), first_failure_at_ + grace)) {
        break;
      }
    }
    return failure_.value_or(absl::OkStatus());
  }

 private:
  bool DoneOrFailed() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return done_ || failure_.has_value();
  }

  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Status> failure_ ABSL_GUARDED_BY(mu_);
  absl::Time first_failure_at_ ABSL_GUARDED_BY(mu_);
};

// How long a failed step waits for the tasks that have not answered after
// its first failure (the others' aborts take milliseconds).
constexpr int64_t kStragglerGraceMs = 500;

}  // namespace

class MasterSession::Impl {
 public:
  explicit Impl(const MasterSessionOptions& options)
      : options_(options),
        step_timeout_ms_(options.session.step_timeout_ms > 0 ? options.session.step_timeout_ms
                                                             : kDefaultClusterStepTimeoutMs),
        pool_("master", /*max_idle=*/16) {}
  ~Impl() { (void)Close(); }

  absl::Status Init(const GraphDef& def);
  absl::Status Extend(const GraphDef& def);
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options, RunMetadata* metadata);
  const std::vector<DeviceInfo>& device_infos() const { return device_infos_; }
  absl::Status Close();

 private:
  absl::Status DiscoverDevices();
  absl::StatusOr<std::shared_ptr<ClusterSignature>> Compile(
      const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
      const std::vector<std::string>& targets);
  void Deregister(const ClusterSignature& c);
  void Forget(const std::string& key);
  int64_t NewStepId();

  const MasterSessionOptions options_;
  const int64_t step_timeout_ms_;  // when a run gives none
  CallPool pool_;
  std::string handle_;
  std::vector<DeviceInfo> device_infos_;
  std::vector<std::unique_ptr<ProxyDevice>> devices_;
  std::map<std::string, uint64_t> incarnations_;  // task -> incarnation
  absl::Mutex rng_mu_;
  absl::BitGen rng_ ABSL_GUARDED_BY(rng_mu_);
  SignatureCache<ClusterSignature> signatures_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
};

absl::Status MasterSession::Impl::Init(const GraphDef& def) {
  if (options_.workers == nullptr || options_.session.ops == nullptr ||
      options_.session.kernels == nullptr) {
    return absl::InvalidArgumentError("MasterSessionOptions needs workers, ops and kernels");
  }
  {
    absl::MutexLock lock(&rng_mu_);
    handle_ = absl::StrCat("session_", absl::Uniform<uint64_t>(rng_));
  }
  RETURN_IF_ERROR(DiscoverDevices());
  absl::MutexLock lock(&mu_);
  graph_ = std::make_unique<Graph>(options_.session.ops);
  return ImportGraphDef(def, graph_.get());
}

absl::Status MasterSession::Impl::DiscoverDevices() {
  std::vector<std::string> tasks = options_.workers->ListTasks();
  if (tasks.empty()) return absl::InvalidArgumentError("the cluster has no tasks");
  std::map<std::string, WorkerInfo> found;
  std::map<std::string, absl::Status> last_error;
  const absl::Time deadline = absl::Now() + absl::Milliseconds(options_.wait_for_cluster_ms);
  while (true) {
    for (const std::string& task : tasks) {
      if (found.count(task)) continue;
      absl::StatusOr<WorkerInterface*> w = options_.workers->GetWorker(task);
      if (!w.ok()) return w.status();
      absl::StatusOr<WorkerInfo> info = (*w)->GetStatus();
      if (info.ok()) {
        found[task] = *std::move(info);
      } else if (absl::IsUnauthenticated(info.status()) ||
                 absl::IsPermissionDenied(info.status())) {
        // Another task (or a stranger) answers at this task's address: a
        // wrong cluster spec or credentials, which waiting does not mend.
        return info.status();
      } else {
        last_error[task] = info.status();
      }
    }
    if (found.size() == tasks.size() || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(100));
  }
  if (found.size() != tasks.size()) {
    std::vector<std::string> missing;
    for (const std::string& task : tasks) {
      if (!found.count(task)) missing.push_back(absl::StrCat(task, " (", last_error[task].message(), ")"));
    }
    return absl::UnavailableError(absl::StrCat("tasks did not answer within ",
                                               options_.wait_for_cluster_ms,
                                               " ms: ", absl::StrJoin(missing, "; ")));
  }
  for (const std::string& task : tasks) {
    const WorkerInfo& info = found[task];
    incarnations_[task] = static_cast<uint64_t>(info.incarnation);
    for (const DeviceInfo& d : info.devices) {
      device_infos_.push_back(d);
      devices_.push_back(std::make_unique<ProxyDevice>(d));
    }
  }
  return absl::OkStatus();
}

absl::Status MasterSession::Impl::Extend(const GraphDef& def) {
  if (signatures_.closed()) return absl::FailedPreconditionError("session is closed");
  {
    absl::MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(graph_, ExtendGraph(*graph_, def));
  }
  for (const auto& c : signatures_.Clear()) Deregister(*c);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<ClusterSignature>> MasterSession::Impl::Compile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  SignatureCompileOptions o;
  for (const auto& d : devices_) o.devices.push_back(d.get());
  o.config = &options_.session;
  o.get_incarnation = [this](const std::string& device) -> uint64_t {
    auto it = incarnations_.find(TaskOfDevice(device));
    return it == incarnations_.end() ? 1 : it->second;
  };
  absl::StatusOr<CompiledSignature> compiled;
  {
    absl::ReaderMutexLock lock(&mu_);
    compiled = CompileSignature(*graph_, feeds, fetches, targets, o);
  }
  RETURN_IF_ERROR(compiled.status());
  std::map<std::string, GraphDef>& parts = compiled->partitions;
  auto callable = std::make_shared<ClusterSignature>();
  std::map<std::string, std::map<std::string, GraphDef>> by_task;
  for (auto& [device, def] : parts) {
    callable->partition_graphs.push_back(def);
    by_task[TaskOfDevice(device)][device] = std::move(def);
  }
  for (auto& [task, task_parts] : by_task) {
    TaskPart part;
    part.task = task;
    ASSIGN_OR_RETURN(part.worker, options_.workers->GetWorker(task));
    for (const auto& [device, def] : task_parts) {
      for (const NodeDef& n : def.node()) {
        if (n.op() != kArgOp && n.op() != kRetvalOp) continue;
        auto it = n.attr().find("index");
        if (it == n.attr().end()) continue;
        int index = static_cast<int>(it->second.i());
        (n.op() == kArgOp ? part.arg_indices : part.retval_indices).push_back(index);
      }
    }
    absl::StatusOr<std::string> handle = part.worker->RegisterGraph(handle_, task_parts);
    if (!handle.ok()) {
      Deregister(*callable);
      return AddContext(handle.status(), absl::StrCat("registering the graph on ", task));
    }
    part.graph_handle = *std::move(handle);
    callable->parts.push_back(std::move(part));
  }
  callable->client = std::move(compiled->client);
  return callable;
}

void MasterSession::Impl::Deregister(const ClusterSignature& c) {
  for (const TaskPart& p : c.parts) {
    if (!p.graph_handle.empty()) (void)p.worker->DeregisterGraph(p.graph_handle);
  }
}

void MasterSession::Impl::Forget(const std::string& key) {
  std::shared_ptr<ClusterSignature> c = signatures_.Erase(key);
  if (c == nullptr) return;
  // The graphs of a task that is gone are gone with it; the others go now.
  pool_.Schedule([this, c] { Deregister(*c); });
}

int64_t MasterSession::Impl::NewStepId() {
  absl::MutexLock lock(&rng_mu_);
  return static_cast<int64_t>(absl::Uniform<uint64_t>(rng_) >> 1);
}

absl::StatusOr<std::vector<Tensor>> MasterSession::Impl::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  for (const auto& f : feeds) feed_names.push_back(f.first);
  const std::string key = RunSignatureKey(feed_names, fetches, targets);
  ASSIGN_OR_RETURN(std::shared_ptr<ClusterSignature> c, signatures_.GetOrBuild(key, [&]() {
    return Compile(feed_names, fetches, targets);
  }));
  for (size_t i = 0; i < feeds.size(); ++i) {
    RETURN_IF_ERROR(CheckFeed(c->client, static_cast<int>(i), feeds[i].first, feeds[i].second));
  }
  const int64_t step_id = NewStepId();
  const int n = static_cast<int>(c->parts.size());
  // Each task's call, made whole before any is sent: a call may outlive
  // this Run (StepCalls), so it holds no reference to its arguments.
  std::vector<RunGraphArgs> args(n);
  for (int i = 0; i < n; ++i) {
    const TaskPart& p = c->parts[i];
    args[i].graph_handle = p.graph_handle;
    args[i].step_id = step_id;
    // RunOptions::timeout_in_ms, when given, replaces the session's step
    // deadline: each task stops its partitions (a loop that never ends)
    // and answers DeadlineExceeded when it passes.
    args[i].timeout_ms = options.timeout_in_ms > 0 ? options.timeout_in_ms : step_timeout_ms_;
    for (int a : p.arg_indices) args[i].feeds[a] = feeds[a].second;
    args[i].retval_indices = p.retval_indices;
  }
  auto calls = std::make_shared<StepCalls>(n);
  // The step engine's fan-in (runtime/step_barrier.h), over one RunGraph
  // per task; its root cause is the step's error. The first failure stops
  // the step everywhere else, so that nobody waits for that task's tensors
  // until the deadline. The aborts are sent from the call pool: one to a
  // hung task waits for its RPC deadline, and the step must not.
  StepBarrier* barrier = StepBarrier::Create(
      n,
      [this, c, step_id](int failed, const absl::Status& s) {
        for (int j = 0; j < static_cast<int>(c->parts.size()); ++j) {
          if (j == failed) continue;
          WorkerInterface* w = c->parts[j].worker;
          pool_.Schedule([w, step_id, s] { (void)w->AbortStep(step_id, s); });
        }
      },
      [calls](absl::Status) { calls->Finish(); });
  // Every call from the pool, so that a task that stopped answering holds
  // no caller: a failed step ends kStragglerGraceMs after its first failure.
  for (int i = 0; i < n; ++i) {
    pool_.Schedule([c, calls, i, call = std::move(args[i]), report = barrier->Get(i)] {
      const absl::Status s = c->parts[i].worker->RunGraph(call, &calls->results[i]);
      if (!s.ok()) calls->NoteFailure(s);
      report(s);
    });
  }
  // A step with nothing to run (no fetches, no targets) has no parts and
  // is done at once (it waited forever: found by service_handlers_test).
  const absl::Status status = calls->Wait(absl::Milliseconds(kStragglerGraceMs));
  // Transfers of the step are forgotten in the background.
  for (const TaskPart& p : c->parts) {
    WorkerInterface* w = p.worker;
    pool_.Schedule([w, step_id] { (void)w->CleanupStep(step_id); });
  }
  if (!status.ok()) {
    // A task may have restarted (its graphs gone) or be gone: register
    // afresh on the next run.
    Forget(key);
    return status;
  }
  std::vector<std::map<int, Tensor>>& results = calls->results;  // every call has answered
  std::vector<Tensor> out(fetches.size());
  for (int i = 0; i < n; ++i) {
    for (auto& [index, t] : results[i]) {
      if (index >= 0 && index < static_cast<int>(out.size())) out[index] = std::move(t);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].IsInitialized()) {
      return absl::InternalError(absl::StrCat("fetch '", fetches[i], "' was not produced"));
    }
  }
  if (metadata != nullptr && options.output_partition_graphs) {
    metadata->partition_graphs = c->partition_graphs;
  }
  return out;
}

absl::Status MasterSession::Impl::Close() {
  std::vector<std::shared_ptr<ClusterSignature>> signatures;
  if (!signatures_.Close(&signatures)) return absl::OkStatus();
  for (const auto& c : signatures) Deregister(*c);
  return absl::OkStatus();
}

MasterSession::MasterSession(std::unique_ptr<WorkerCache> owned_workers,
                             std::unique_ptr<Impl> impl)
    : owned_workers_(std::move(owned_workers)), impl_(std::move(impl)) {}
MasterSession::~MasterSession() = default;

absl::StatusOr<std::unique_ptr<MasterSession>> MasterSession::Create(
    const MasterSessionOptions& options, const GraphDef& def,
    std::unique_ptr<WorkerCache> owned_workers) {
  auto impl = std::make_unique<Impl>(options);
  RETURN_IF_ERROR(impl->Init(def));
  return std::unique_ptr<MasterSession>(
      new MasterSession(std::move(owned_workers), std::move(impl)));
}

absl::Status MasterSession::Extend(const GraphDef& def) { return impl_->Extend(def); }

absl::StatusOr<std::vector<Tensor>> MasterSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  return impl_->Run(feeds, fetches, targets, options, metadata);
}

std::vector<DeviceInfo> MasterSession::DeviceInfos() const { return impl_->device_infos(); }

std::vector<std::string> MasterSession::ListDevices() const {
  std::vector<std::string> out;
  for (const DeviceInfo& d : impl_->device_infos()) out.push_back(d.name);
  return out;
}

std::vector<AllocatorStats> MasterSession::DeviceMemoryStats() const {
  std::vector<AllocatorStats> out;
  for (const DeviceInfo& d : impl_->device_infos()) {
    AllocatorStats s;
    s.bytes_limit = d.memory_limit;
    out.push_back(s);
  }
  return out;
}

absl::Status MasterSession::Close() { return impl_->Close(); }

}  // namespace sluice
