// The local Session: prunes the graph to what a run needs, rewrites feeds and
// fetches into _Arg/_Retval nodes, places it, partitions it per device, and
// runs one Executor per device. Executors are cached per (feeds, fetches,
// targets) signature.
#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph_def_io.h"
#include "graph/shape_inference.h"
#include "graph/status_macros.h"
#include "absl/synchronization/notification.h"
#include "placement/auto_placer.h"
#include "placement/partition.h"
#include "placement/placer.h"
#include "runtime/client_graph.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"
#include "runtime/executor.h"
#include "runtime/frame_ops.h"
#include "runtime/local_devices.h"
#include "runtime/rendezvous.h"
#include "runtime/session.h"

namespace sluice {
namespace {

// One device's share of a compiled signature.
struct PartitionRun {
  Device* device = nullptr;
  std::unique_ptr<Executor> executor;
  GraphDef def;  // what it runs, for RunMetadata::partition_graphs
};

// A compiled run signature.
struct Callable {
  std::vector<PartitionRun> partitions;  // in the session's device order
  ClientGraph client;  // feed types and shapes (its graph moved into the partitions)
  // The group_key of every collective op it runs (nodes with group_key and
  // instance_key attrs, ops/collective_ops.h).
  std::vector<int64_t> collective_groups;
};

class DirectSession : public Session {
 public:
  explicit DirectSession(const SessionOptions& options) : options_(options) {}

  absl::Status Init(const GraphDef& def);
  absl::Status Extend(const GraphDef& def) override;
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options,
                                          RunMetadata* metadata) override;
  std::vector<std::string> ListDevices() const override;
  std::vector<AllocatorStats> DeviceMemoryStats() const override;
  absl::Status Close() override;

 private:
  absl::StatusOr<std::shared_ptr<Callable>> GetCallable(const std::vector<std::string>& feeds,
                                                        const std::vector<std::string>& fetches,
                                                        const std::vector<std::string>& targets);
  absl::StatusOr<std::shared_ptr<Callable>> Compile(const std::vector<std::string>& feeds,
                                                    const std::vector<std::string>& fetches,
                                                    const std::vector<std::string>& targets)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Places `graph` and builds one executor per device it uses.
  absl::Status BuildPartitions(std::unique_ptr<Graph> graph, Callable* callable) const;
  // Runs every partition of a step concurrently; the first error aborts the
  // others through the step's rendezvous.
  absl::Status RunPartitions(const Callable& c, Executor::Args args);
  // After a failed step: fails the collectives of c's groups still waiting
  // for members that will not come, and resets their execution counts so
  // that the members meet again at the next step. (A concurrent step of the
  // same groups is aborted too.)
  void ResetCollectives(const Callable& c, const absl::Status& cause);

  const SessionOptions options_;
  std::vector<std::unique_ptr<Device>> devices_;
  // Where the members of a collective op (ops/collective_ops.h) on this
  // session's devices meet; declared after devices_ so that collectives
  // still in flight are failed before their devices go.
  CollectiveMailbox collective_mailbox_;
  CollectiveExecutor collectives_{&collective_mailbox_};
  std::atomic<int64_t> next_step_id_{1};
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Callable>> callables_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

absl::Status DirectSession::Init(const GraphDef& def) {
  if (options_.ops == nullptr || options_.kernels == nullptr) {
    return absl::InvalidArgumentError("SessionOptions needs ops and kernels registries");
  }
  LocalDevicesOptions local;
  local.cpu_threads = options_.num_threads;
  local.cpu_memory_limit = options_.cpu_memory_limit;
  local.num_virtual_cpus = options_.num_virtual_cpus;
  local.virtual_cpu_threads = options_.virtual_cpu_threads;
  local.virtual_cpu_memory_limit = options_.virtual_cpu_memory_limit;
  local.max_gpus = options_.max_gpus;
  local.gpu_memory_limit = options_.gpu_memory_limit;
  local.gpu_memory_fraction = options_.gpu_memory_fraction;
  local.gpu_poison_allocations = options_.gpu_poison_allocations;
  ASSIGN_OR_RETURN(devices_, CreateLocalDevices(local));
  absl::MutexLock lock(&mu_);
  graph_ = std::make_unique<Graph>(options_.ops);
  return ImportGraphDef(def, graph_.get());
}

absl::Status DirectSession::Extend(const GraphDef& def) {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  ASSIGN_OR_RETURN(graph_, ExtendGraph(*graph_, def));
  callables_.clear();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Callable>> DirectSession::GetCallable(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  const std::string key = RunSignatureKey(feeds, fetches, targets);
  {
    absl::ReaderMutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    auto it = callables_.find(key);
    if (it != callables_.end()) return it->second;
  }
  absl::MutexLock lock(&mu_);
  auto it = callables_.find(key);
  if (it != callables_.end()) return it->second;
  ASSIGN_OR_RETURN(std::shared_ptr<Callable> c, Compile(feeds, fetches, targets));
  callables_[key] = c;
  return c;
}

absl::StatusOr<std::shared_ptr<Callable>> DirectSession::Compile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  ASSIGN_OR_RETURN(ClientGraph cg, BuildClientGraph(*graph_, feeds, fetches, targets));
  auto callable = std::make_shared<Callable>();
  RETURN_IF_ERROR(BuildPartitions(std::move(cg.graph), callable.get()));
  cg.graph = nullptr;
  callable->client = std::move(cg);
  return callable;
}

absl::Status DirectSession::BuildPartitions(std::unique_ptr<Graph> graph,
                                            Callable* callable) const {
  std::vector<Device*> devices;
  for (const auto& d : devices_) devices.push_back(d.get());
  if (options_.auto_place) {
    AutoPlacerOptions auto_options;
    for (Device* d : devices) {
      DeviceSpec spec;
      spec.name = d->name();
      spec.memory_bytes = d->allocator()->GetStats().bytes_limit;
      auto_options.devices.push_back(std::move(spec));
    }
    RETURN_IF_ERROR(AutoPlace(graph.get(), auto_options).status());
  }
  std::set<int64_t> groups;
  for (const Node* n : graph->nodes()) {
    if (!n->attrs().count("group_key") || !n->attrs().count("instance_key")) continue;
    if (absl::StatusOr<int64_t> g = n->GetAttr<int64_t>("group_key"); g.ok()) groups.insert(*g);
  }
  callable->collective_groups.assign(groups.begin(), groups.end());
  PlacerOptions placer_options;
  placer_options.allow_soft_placement = options_.allow_soft_placement;
  placer_options.default_device = options_.default_device;
  placer_options.whole_graph = graph_.get();
  RETURN_IF_ERROR(PlaceGraph(graph.get(), devices, *options_.kernels, placer_options));
  ASSIGN_OR_RETURN(auto parts, Partition(*graph));
  for (Device* device : devices) {
    auto it = parts.find(device->name());
    if (it == parts.end()) continue;
    PartitionRun run;
    run.device = device;
    run.def = std::move(it->second);
    std::unique_ptr<Graph> part;
    if (parts.size() == 1) {
      part = std::move(graph);  // no transfers: run the placed graph as it is
    } else {
      part = std::make_unique<Graph>(graph->registry());
      ImportOptions import;
      import.allow_internal_ops = true;
      RETURN_IF_ERROR(AddContext(ImportGraphDef(run.def, part.get(), import),
                                 absl::StrCat("partition for ", device->name())));
      for (Node* n : part->nodes()) n->set_assigned_device(device->name());
    }
    ASSIGN_OR_RETURN(run.executor, Executor::Create(std::move(part), device, *options_.kernels));
    callable->partitions.push_back(std::move(run));
  }
  return absl::OkStatus();
}

void DirectSession::ResetCollectives(const Callable& c, const absl::Status& cause) {
  for (int64_t group : c.collective_groups) {
    collectives_.ResetGroup(
        group, absl::AbortedError(absl::StrCat("collective group ", group,
                                               " reset: the step failed: ", cause.message())));
  }
}

absl::Status DirectSession::RunPartitions(const Callable& c, Executor::Args args) {
  if (c.partitions.size() == 1) {
    absl::Status s = c.partitions[0].executor->Run(args);
    if (!s.ok()) ResetCollectives(c, s);
    return s;
  }
  LocalRendezvous rendezvous;
  args.rendezvous = &rendezvous;
  std::atomic<int> pending{static_cast<int>(c.partitions.size())};
  absl::Notification all_done;
  absl::Mutex mu;
  absl::Status first_error;
  auto done = [&](absl::Status s) {
    if (!s.ok()) {
      bool first = false;
      {
        absl::MutexLock lock(&mu);
        first = first_error.ok();
        if (first) first_error = s;
      }
      // Partitions blocked in a collective with a member of this one stop.
      if (first) ResetCollectives(c, s);
    }
    if (pending.fetch_sub(1) == 1) all_done.Notify();
  };
  // Each partition starts on its own device's pool; the last one in this
  // thread.
  for (size_t i = 0; i + 1 < c.partitions.size(); ++i) {
    const PartitionRun* p = &c.partitions[i];
    p->device->thread_pool()->Schedule([p, &args, &done] { p->executor->RunAsync(args, done); });
  }
  c.partitions.back().executor->RunAsync(args, done);
  all_done.WaitForNotification();
  // The partition that failed first aborted the rendezvous with its error;
  // the others only report being cancelled.
  absl::Status cause = rendezvous.abort_status();
  return cause.ok() ? first_error : cause;
}

absl::StatusOr<std::vector<Tensor>> DirectSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  for (const auto& f : feeds) feed_names.push_back(f.first);
  ASSIGN_OR_RETURN(std::shared_ptr<Callable> c, GetCallable(feed_names, fetches, targets));
  CallFrame frame;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Tensor& t = feeds[i].second;
    RETURN_IF_ERROR(CheckFeed(c->client, static_cast<int>(i), feeds[i].first, t));
    frame.args.push_back(t);
  }
  frame.retvals.resize(fetches.size());
  std::unique_ptr<StepStatsCollector> collector;
  if (options.trace) collector = std::make_unique<StepStatsCollector>();
  Executor::Args args;
  args.step_id = next_step_id_.fetch_add(1);
  args.call_frame = &frame;
  args.stats = collector.get();
  args.run_inline = options_.inter_op_parallelism == 1;
  args.collective_executor = &collectives_;
  RETURN_IF_ERROR(RunPartitions(*c, args));
  if (metadata != nullptr) {
    if (collector) metadata->step_stats = collector->Finish();
    if (options.output_partition_graphs) {
      metadata->partition_graphs.clear();
      for (const PartitionRun& p : c->partitions) metadata->partition_graphs.push_back(p.def);
    }
  }
  return std::move(frame.retvals);
}

std::vector<std::string> DirectSession::ListDevices() const {
  std::vector<std::string> out;
  for (const auto& d : devices_) out.push_back(d->name());
  return out;
}

std::vector<AllocatorStats> DirectSession::DeviceMemoryStats() const {
  std::vector<AllocatorStats> out;
  for (const auto& d : devices_) out.push_back(d->allocator()->GetStats());
  return out;
}

absl::Status DirectSession::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  callables_.clear();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options,
                                                    const GraphDef& def) {
  auto session = std::make_unique<DirectSession>(options);
  RETURN_IF_ERROR(session->Init(def));
  return std::unique_ptr<Session>(std::move(session));
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionOptions& options,
                                                    const Graph& graph) {
  GraphDef def;
  graph.ToGraphDef(&def);
  return NewSession(options, def);
}

}  // namespace sluice
