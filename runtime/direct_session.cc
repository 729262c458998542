// The local Session: compiles each run signature once over this process's
// devices (placement/compile_signature.h), builds its partitions' executors
// and runs them (runtime/step_partitions.h): the step engine the worker
// uses too. Compiled signatures are cached per (feeds, fetches, targets).
#include "runtime/direct_session.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "placement/compile_signature.h"
#include "runtime/client_graph.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"
#include "runtime/executor.h"
#include "runtime/frame_ops.h"
#include "runtime/local_devices.h"
#include "runtime/session.h"
#include "runtime/signature_cache.h"
#include "runtime/rendezvous.h"
#include "runtime/step_deadline.h"
#include "runtime/step_partitions.h"
#include "runtime/step_replay.h"

namespace sluice {
namespace {

// A compiled run signature: feed checks and the partitions to run.
struct LocalSignature {
  ClientGraph client;
  std::unique_ptr<StepPartitions> partitions;
  // Set for a one-partition step on a device that can record it.
  std::unique_ptr<StepReplay> replay;
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
  // Runs a step whose signature may be recorded and replayed.
  absl::Status RunReplayable(const LocalSignature& c, const Executor::Args& args, bool* replayed);
  absl::StatusOr<std::shared_ptr<LocalSignature>> Compile(const std::vector<std::string>& feeds,
                                                          const std::vector<std::string>& fetches,
                                                          const std::vector<std::string>& targets);

  const SessionOptions options_;
  std::vector<std::unique_ptr<Device>> devices_;
  // Where the members of a collective op (ops/collective_ops.h) on this
  // session's devices meet; declared after devices_ so that collectives
  // still in flight are failed before their devices go.
  CollectiveMailbox collective_mailbox_;
  CollectiveExecutor collectives_{&collective_mailbox_, options_.backends};
  std::atomic<int64_t> next_step_id_{1};
  // Steps hold it shared; a step that records (StepReplay) holds it
  // exclusively, so nothing else queues work on its device meanwhile. Used
  // only when some device can record.
  absl::Mutex steps_mu_;
  bool any_device_can_capture_ = false;
  SignatureCache<LocalSignature> signatures_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
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
  ASSIGN_OR_RETURN(devices_, CreateDevices(options_.backends, local));
  for (const auto& d : devices_) {
    any_device_can_capture_ |= options_.capture_steps && d->can_capture();
  }
  absl::MutexLock lock(&mu_);
  graph_ = std::make_unique<Graph>(options_.ops);
  return ImportGraphDef(def, graph_.get());
}

absl::Status DirectSession::Extend(const GraphDef& def) {
  if (signatures_.closed()) return absl::FailedPreconditionError("session is closed");
  {
    absl::MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(graph_, ExtendGraph(*graph_, def));
  }
  signatures_.Clear();
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<LocalSignature>> DirectSession::Compile(
    const std::vector<std::string>& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  SignatureCompileOptions o;
  for (const auto& d : devices_) o.devices.push_back(d.get());
  o.kernels = options_.kernels;
  o.allow_soft_placement = options_.allow_soft_placement;
  o.default_device = options_.default_device;
  o.auto_place = options_.auto_place;
  o.fuse_ops = options_.fuse_ops;
  absl::ReaderMutexLock lock(&mu_);
  ASSIGN_OR_RETURN(CompiledSignature c, CompileSignature(*graph_, feeds, fetches, targets, o));
  std::vector<PartitionGraph> graphs;
  for (Device* device : o.devices) {
    auto it = c.partitions.find(device->name());
    if (it == c.partitions.end()) continue;
    PartitionGraph g;
    g.device = device;
    g.def = std::move(it->second);
    g.graph = std::move(c.single_partition);  // set only when it is the one partition
    graphs.push_back(std::move(g));
  }
  auto signature = std::make_shared<LocalSignature>();
  ASSIGN_OR_RETURN(signature->partitions,
                   StepPartitions::Build(std::move(graphs), options_.ops, *options_.kernels));
  signature->client = std::move(c.client);
  const std::vector<StepPartitions::Part>& parts = signature->partitions->parts();
  if (options_.capture_steps && parts.size() == 1) {
    signature->replay = StepReplay::Create(parts[0].device, parts[0].executor.get());
  }
  return signature;
}

absl::StatusOr<std::vector<Tensor>> DirectSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    const RunOptions& options, RunMetadata* metadata) {
  std::vector<std::string> feed_names;
  for (const auto& f : feeds) feed_names.push_back(f.first);
  ASSIGN_OR_RETURN(std::shared_ptr<LocalSignature> c,
                   signatures_.GetOrBuild(RunSignatureKey(feed_names, fetches, targets), [&]() {
                     return Compile(feed_names, fetches, targets);
                   }));
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
  // A timed step gets a rendezvous (if its partitions have none) for the
  // deadline to abort.
  std::unique_ptr<LocalRendezvous> timed_rendezvous;
  if (options.timeout_in_ms > 0) {
    timed_rendezvous = std::make_unique<LocalRendezvous>();
    args.rendezvous = timed_rendezvous.get();
  }
  const StepDeadline deadline(options.timeout_in_ms, args.rendezvous);
  bool replayed = false;
  if (!any_device_can_capture_) {
    RETURN_IF_ERROR(c->partitions->Run(args));
  } else if (c->replay != nullptr) {
    RETURN_IF_ERROR(RunReplayable(*c, args, &replayed));
  } else {
    // Kept out while a step of the same devices records.
    absl::ReaderMutexLock lock(&steps_mu_);
    RETURN_IF_ERROR(c->partitions->Run(args));
  }
  if (metadata != nullptr) {
    metadata->step_replayed = replayed;
    if (collector) metadata->step_stats = collector->Finish();
    if (options.output_partition_graphs) {
      metadata->partition_graphs.clear();
      for (const StepPartitions::Part& p : c->partitions->parts()) {
        metadata->partition_graphs.push_back(p.def);
      }
    }
  }
  return std::move(frame.retvals);
}

absl::Status DirectSession::RunReplayable(const LocalSignature& c, const Executor::Args& args,
                                          bool* replayed) {
  // A step that would record takes the session's steps exclusively, but
  // only if none is running: one may be waiting for another (a queue), and
  // recording can wait for a later step.
  if (c.replay->NeedsExclusiveDevice(*args.call_frame) && steps_mu_.TryLock()) {
    absl::Status s = c.replay->Run(args, /*may_record=*/true, replayed);
    steps_mu_.Unlock();
    return s;
  }
  absl::ReaderMutexLock lock(&steps_mu_);
  return c.replay->Run(args, /*may_record=*/false, replayed);
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
  std::vector<std::shared_ptr<LocalSignature>> gone;
  signatures_.Close(&gone);
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
