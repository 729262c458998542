// The cluster session: client graph -> placement over every task's devices
// -> per-device partitions registered per task -> concurrent RunGraph calls.
#include "distributed/master_session.h"

#include <atomic>
#include <map>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "distributed/call_pool.h"
#include "graph/graph_def_io.h"
#include "graph/status_macros.h"
#include "placement/partition.h"
#include "placement/placer.h"
#include "runtime/client_graph.h"
#include "runtime/device.h"
#include "runtime/frame_ops.h"

namespace sluice {
namespace {

// A device of some task, as the placer sees it: a name and a type.
class ProxyDevice : public Device {
 public:
  explicit ProxyDevice(const DeviceInfo& info) : Device(info.name, info.device_type) {}
  Allocator* allocator() override { return nullptr; }
  ThreadPool* thread_pool() override { return nullptr; }
};

// One task's share of a compiled run signature.
struct TaskPart {
  std::string task;
  WorkerInterface* worker = nullptr;
  std::string graph_handle;
  std::vector<int> arg_indices;
  std::vector<int> retval_indices;
};

struct Callable {
  ClientGraph client;  // feed types and shapes
  std::vector<TaskPart> parts;
  std::vector<GraphDef> partition_graphs;
};

// Root causes first: a task that reports being aborted or cancelled only
// echoes another's failure.
bool IsEcho(const absl::Status& s) {
  return s.code() == absl::StatusCode::kAborted || s.code() == absl::StatusCode::kCancelled;
}

}  // namespace

class MasterSession::Impl {
 public:
  explicit Impl(const MasterSessionOptions& options)
      : options_(options), pool_("master", /*max_idle=*/16) {}
  ~Impl() { (void)Close(); }

  absl::Status Init(const GraphDef& def);
  absl::Status Extend(const GraphDef& def);
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options, RunMetadata* metadata);
  std::vector<DeviceInfo> ListDevices() const { return device_infos_; }
  absl::Status Close();

 private:
  absl::Status DiscoverDevices();
  absl::StatusOr<std::shared_ptr<Callable>> GetCallable(const std::vector<std::string>& feeds,
                                                        const std::vector<std::string>& fetches,
                                                        const std::vector<std::string>& targets,
                                                        std::string* key);
  absl::StatusOr<std::shared_ptr<Callable>> Compile(const std::vector<std::string>& feeds,
                                                    const std::vector<std::string>& fetches,
                                                    const std::vector<std::string>& targets)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void Deregister(const Callable& c);
  void Forget(const std::string& key);
  int64_t NewStepId();

  const MasterSessionOptions options_;
  CallPool pool_;
  std::string handle_;
  std::vector<DeviceInfo> device_infos_;
  std::vector<std::unique_ptr<ProxyDevice>> devices_;
  std::map<std::string, uint64_t> incarnations_;  // task -> incarnation
  absl::Mutex rng_mu_;
  absl::BitGen rng_ ABSL_GUARDED_BY(rng_mu_);
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Callable>> callables_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::Status MasterSession::Impl::Init(const GraphDef& def) {
  if (options_.workers == nullptr || options_.ops == nullptr || options_.kernels == nullptr) {
    return absl::InvalidArgumentError("MasterSessionOptions needs workers, ops and kernels");
  }
  {
    absl::MutexLock lock(&rng_mu_);
    handle_ = absl::StrCat("session_", absl::Uniform<uint64_t>(rng_));
  }
  RETURN_IF_ERROR(DiscoverDevices());
  absl::MutexLock lock(&mu_);
  graph_ = std::make_unique<Graph>(options_.ops);
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
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  ASSIGN_OR_RETURN(graph_, ExtendGraph(*graph_, def));
  for (const auto& [key, c] : callables_) Deregister(*c);
  callables_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Callable>> MasterSession::Impl::GetCallable(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets, std::string* key) {
  *key = RunSignatureKey(feeds, fetches, targets);
  {
    absl::ReaderMutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    auto it = callables_.find(*key);
    if (it != callables_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);
  auto it = callables_.find(*key);
  if (it != callables_.end()) return it->second;
  ASSIGN_OR_RETURN(std::shared_ptr<Callable> c, Compile(feeds, fetches, targets));
  callables_[*key] = c;
  return c;
}

absl::StatusOr<std::shared_ptr<Callable>> MasterSession::Impl::Compile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  ASSIGN_OR_RETURN(ClientGraph cg, BuildClientGraph(*graph_, feeds, fetches, targets));
  std::vector<Device*> devices;
  for (const auto& d : devices_) devices.push_back(d.get());
  PlacerOptions placer_options;
  placer_options.allow_soft_placement = options_.allow_soft_placement;
  placer_options.default_device = options_.default_device;
  placer_options.whole_graph = graph_.get();
  RETURN_IF_ERROR(PlaceGraph(cg.graph.get(), devices, *options_.kernels, placer_options));
  PartitionOptions partition_options;
  partition_options.get_incarnation = [this](const std::string& device) -> uint64_t {
    auto it = incarnations_.find(TaskOfDevice(device));
    return it == incarnations_.end() ? 1 : it->second;
  };
  ASSIGN_OR_RETURN(auto parts, Partition(*cg.graph, partition_options));
  auto callable = std::make_shared<Callable>();
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
  cg.graph = nullptr;
  callable->client = std::move(cg);
  return callable;
}

void MasterSession::Impl::Deregister(const Callable& c) {
  for (const TaskPart& p : c.parts) {
    if (!p.graph_handle.empty()) (void)p.worker->DeregisterGraph(p.graph_handle);
  }
}

void MasterSession::Impl::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = callables_.find(key);
  if (it == callables_.end()) return;
  std::shared_ptr<Callable> c = it->second;
  callables_.erase(it);
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
  std::string key;
  ASSIGN_OR_RETURN(std::shared_ptr<Callable> c, GetCallable(feed_names, fetches, targets, &key));
  for (size_t i = 0; i < feeds.size(); ++i) {
    RETURN_IF_ERROR(CheckFeed(c->client, static_cast<int>(i), feeds[i].first, feeds[i].second));
  }
  const int64_t step_id = NewStepId();
  const int n = static_cast<int>(c->parts.size());
  std::vector<std::map<int, Tensor>> results(n);
  std::vector<absl::Status> statuses(n);
  std::atomic<int> pending{n};
  std::atomic<bool> aborted{false};
  absl::Notification all_done;
  auto run_part = [&, step_id](int i) {
    const TaskPart& p = c->parts[i];
    RunGraphArgs args;
    args.graph_handle = p.graph_handle;
    args.step_id = step_id;
    args.timeout_ms = options_.step_timeout_ms;
    for (int a : p.arg_indices) args.feeds[a] = feeds[a].second;
    args.retval_indices = p.retval_indices;
    statuses[i] = p.worker->RunGraph(args, &results[i]);
    if (!statuses[i].ok() && !aborted.exchange(true)) {
      // Stop the step everywhere else, so nobody waits for this task's
      // tensors until the deadline.
      for (int j = 0; j < n; ++j) {
        if (j != i) (void)c->parts[j].worker->AbortStep(step_id, statuses[i]);
      }
    }
    if (pending.fetch_sub(1) == 1) all_done.Notify();
  };
  for (int i = 1; i < n; ++i) pool_.Schedule([&run_part, i] { run_part(i); });
  if (n > 0) run_part(0);
  // A step with nothing to run (no fetches, no targets) has no parts and
  // is done at once (it waited forever: found by service_handlers_test).
  if (n > 0) all_done.WaitForNotification();
  // Transfers of the step are forgotten in the background.
  for (const TaskPart& p : c->parts) {
    WorkerInterface* w = p.worker;
    pool_.Schedule([w, step_id] { (void)w->CleanupStep(step_id); });
  }
  absl::Status first;
  for (const absl::Status& s : statuses) {
    if (s.ok()) continue;
    if (first.ok() || (IsEcho(first) && !IsEcho(s))) first = s;
  }
  if (!first.ok()) {
    // A task may have restarted (its graphs gone) or be gone: register
    // afresh on the next run.
    Forget(key);
    return first;
  }
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
  std::map<std::string, std::shared_ptr<Callable>> callables;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    callables.swap(callables_);
  }
  for (const auto& [key, c] : callables) Deregister(*c);
  return absl::OkStatus();
}

MasterSession::MasterSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MasterSession::~MasterSession() = default;

absl::StatusOr<std::unique_ptr<MasterSession>> MasterSession::Create(
    const MasterSessionOptions& options, const GraphDef& def) {
  auto impl = std::make_unique<Impl>(options);
  RETURN_IF_ERROR(impl->Init(def));
  return std::unique_ptr<MasterSession>(new MasterSession(std::move(impl)));
}

absl::Status MasterSession::Extend(const GraphDef& def) { return impl_->Extend(def); }

absl::StatusOr<std::vector<Tensor>> MasterSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  return impl_->Run(feeds, fetches, targets, options, metadata);
}

std::vector<DeviceInfo> MasterSession::ListDevices() const { return impl_->ListDevices(); }

absl::Status MasterSession::Close() { return impl_->Close(); }

namespace {

class SessionOverMaster : public Session {
 public:
  SessionOverMaster(std::unique_ptr<MasterSession> master, std::unique_ptr<WorkerCache> workers)
      : workers_(std::move(workers)), master_(std::move(master)) {}
  absl::Status Extend(const GraphDef& def) override { return master_->Extend(def); }
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options,
                                          RunMetadata* metadata) override {
    return master_->Run(feeds, fetches, targets, options, metadata);
  }
  std::vector<std::string> ListDevices() const override {
    std::vector<std::string> out;
    for (const DeviceInfo& d : master_->ListDevices()) out.push_back(d.name);
    return out;
  }
  // Memory statistics stay with each task; a cluster session reports limits.
  std::vector<AllocatorStats> DeviceMemoryStats() const override {
    std::vector<AllocatorStats> out;
    for (const DeviceInfo& d : master_->ListDevices()) {
      AllocatorStats s;
      s.bytes_limit = d.memory_limit;
      out.push_back(s);
    }
    return out;
  }
  absl::Status Close() override { return master_->Close(); }

 private:
  std::unique_ptr<WorkerCache> workers_;  // declared first: outlives the master using it
  std::unique_ptr<MasterSession> master_;
};

}  // namespace

std::unique_ptr<Session> NewSessionOverMaster(std::unique_ptr<MasterSession> master,
                                              std::unique_ptr<WorkerCache> workers) {
  return std::make_unique<SessionOverMaster>(std::move(master), std::move(workers));
}

}  // namespace sluice
