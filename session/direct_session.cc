// The local Session: compiles each run signature once over this process's
// devices (session/compile_signature.h), builds its partitions' executors
// and runs them (runtime/step_partitions.h): the step engine the worker
// uses too. Compiled signatures are cached per (feeds, fetches, targets).
#include "session/direct_session.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph_def_io.h"
#include "base/status_macros.h"
#include "session/compile_signature.h"
#include "runtime/client_graph.h"
#include "runtime/collective/collective_executor.h"
#include "runtime/collective/mailbox.h"
#include "runtime/executor.h"
#include "runtime/frame_ops.h"
#include "runtime/local_devices.h"
#include "runtime/session.h"
#include "session/signature_cache.h"
#include "runtime/rendezvous.h"
#include "runtime/step_deadline.h"
#include "runtime/stateful_kernels.h"
#include "runtime/step_partitions.h"
#include "runtime/step_gate.h"

namespace sluice {
namespace {

// A compiled run signature: feed checks and the partitions to run.
struct LocalSignature {
  ClientGraph client;
  std::unique_ptr<StepPartitions> partitions;
};

class DirectSession : public Session {
 public:
  explicit DirectSession(const SessionConfig& config) : config_(config) {}

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
  absl::StatusOr<std::shared_ptr<LocalSignature>> Compile(const std::vector<std::string>& feeds,
                                                          const std::vector<std::string>& fetches,
                                                          const std::vector<std::string>& targets);

  const SessionConfig config_;
  std::vector<std::unique_ptr<Device>> devices_;
  // Where the members of a collective op (ops/collective/collective_ops.h) on this
  // session's devices meet; declared after devices_ so that collectives
  // still in flight are failed before their devices go.
  CollectiveMailbox collective_mailbox_;
  CollectiveExecutor collectives_{&collective_mailbox_, config_.backends};
  std::atomic<int64_t> next_step_id_{1};
  // Steps pass it shared; a step that records (runtime/step_replay.h)
  // alone, so nothing else queues work on its device meanwhile. Used only
  // when some device can record.
  StepGate step_gate_;
  bool any_device_can_capture_ = false;
  // Stateful nodes keep one kernel across this session's signatures.
  StatefulKernels stateful_kernels_;
  SignatureCache<LocalSignature> signatures_;
  mutable absl::Mutex mu_;
  std::unique_ptr<Graph> graph_ ABSL_GUARDED_BY(mu_);
};

absl::Status DirectSession::Init(const GraphDef& def) {
  if (config_.ops == nullptr || config_.kernels == nullptr) {
    return absl::InvalidArgumentError("SessionConfig needs ops and kernels registries");
  }
  ASSIGN_OR_RETURN(devices_, CreateDevices(config_.backends, config_.devices));
  for (const auto& d : devices_) {
    any_device_can_capture_ |= config_.capture_steps && d->can_capture();
  }
  absl::MutexLock lock(&mu_);
  graph_ = std::make_unique<Graph>(config_.ops);
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
  o.config = &config_;
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
  StepPartitionsOptions capture;
  capture.capture_steps = any_device_can_capture_;
  capture.gate = any_device_can_capture_ ? &step_gate_ : nullptr;
  capture.stateful_kernels = &stateful_kernels_;
  ASSIGN_OR_RETURN(signature->partitions, StepPartitions::Build(std::move(graphs), config_.ops,
                                                                *config_.kernels, capture));
  signature->client = std::move(c.client);
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
  args.run_inline = config_.inter_op_parallelism == 1;
  args.collective_executor = &collectives_;
  // A timed step gets a rendezvous (if its partitions have none) for the
  // deadline to abort.
  std::unique_ptr<LocalRendezvous> timed_rendezvous;
  const int64_t timeout_ms =
      options.timeout_in_ms > 0 ? options.timeout_in_ms : config_.step_timeout_ms;
  if (timeout_ms > 0) {
    timed_rendezvous = std::make_unique<LocalRendezvous>();
    args.rendezvous = timed_rendezvous.get();
  }
  const StepDeadline deadline(timeout_ms, args.rendezvous);
  bool replayed = false;
  RETURN_IF_ERROR(c->partitions->RunStep(args, &replayed));
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

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionConfig& config,
                                                    const GraphDef& def) {
  auto session = std::make_unique<DirectSession>(config);
  RETURN_IF_ERROR(session->Init(def));
  return std::unique_ptr<Session>(std::move(session));
}

absl::StatusOr<std::unique_ptr<Session>> NewSession(const SessionConfig& config,
                                                    const Graph& graph) {
  GraphDef def;
  graph.ToGraphDef(&def);
  return NewSession(config, def);
}

}  // namespace sluice
