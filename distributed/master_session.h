// MasterSession: a session over a whole cluster. It places each run
// signature's graph over every device of every task (placement/placer.h,
// with job/task in the device names), partitions it per device, registers
// each task's partitions with that task's worker, and runs a step by calling
// every involved worker at once; cross-task tensors move by RecvTensor
// between the workers themselves.
//
//   MasterSessionOptions opts;
//   opts.workers = &cache;                        // every task of the cluster
//   opts.session = BuiltinSessionConfig();        // builtin_session.h
//   opts.session.default_device = "/job:worker/replica:0/task:0";
//   ASSIGN_OR_RETURN(std::unique_ptr<MasterSession> s, MasterSession::Create(opts, graph_def));
//   ASSIGN_OR_RETURN(std::vector<Tensor> out, s->Run({{"x:0", x}}, {"loss:0"}, {"train"}));
//
// On creation it asks every task for its devices, retrying until
// `wait_for_cluster_ms`, and fails with Unavailable listing the tasks that
// never answered. A step that fails on one task is aborted on the others;
// the step returns its root cause, naming the task (the first error that
// is not Aborted or Cancelled, the codes of a task stopped because of
// another's failure; else the first error), at most half a second after its
// first error came: a task that stopped answering (hung, cut off) does not
// hold the step until its call's deadline. That call ends in the
// background, so destroying the session may wait for it, up to the step's
// timeout (RunOptions::timeout_in_ms or the session's) + 2 s. A task that
// restarted since its graphs were registered makes the step fail with
// Aborted naming it; the next Run registers again (its variables are gone,
// so a training loop restores them: distributed/collective_training/).
//
// A Session (runtime/session.h): code written against a local session runs
// on a cluster unchanged. Thread-safe: Run may be called concurrently.
// `workers` is borrowed unless handed over to Create.
#ifndef SLUICE_DISTRIBUTED_MASTER_SESSION_H_
#define SLUICE_DISTRIBUTED_MASTER_SESSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "distributed/worker_interface.h"
#include "graph/op_registry.h"
#include "graph/proto/graph.pb.h"
#include "runtime/kernel_registry.h"
#include "runtime/session.h"
#include "session/session_config.h"

namespace sluice {

struct MasterSessionOptions {
  WorkerCache* workers = nullptr;  // required: every task of the cluster
  // The session's knobs (session/session_config.h): registries (required),
  // placement and execution. Its devices group is unused: each task made
  // its own. A step_timeout_ms of 0 is kDefaultClusterStepTimeoutMs.
  SessionConfig session;
  // How long creation waits for every task to answer.
  int64_t wait_for_cluster_ms = 30000;
};

class MasterSession : public Session {
 public:
  // `owned_workers`, when given, is options.workers, kept alive (and
  // destroyed after the session).
  static absl::StatusOr<std::unique_ptr<MasterSession>> Create(
      const MasterSessionOptions& options, const tensorflow::GraphDef& def,
      std::unique_ptr<WorkerCache> owned_workers = nullptr);
  ~MasterSession() override;

  absl::Status Extend(const tensorflow::GraphDef& def) override;
  using Session::Run;
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options = {},
                                          RunMetadata* metadata = nullptr) override;
  std::vector<std::string> ListDevices() const override;
  // Memory statistics stay with each task; a cluster session reports limits.
  std::vector<AllocatorStats> DeviceMemoryStats() const override;
  // Deregisters the session's graphs; later calls fail.
  absl::Status Close() override;

  // Every device of the cluster, as its task describes it.
  std::vector<DeviceInfo> DeviceInfos() const;

 private:
  class Impl;
  MasterSession(std::unique_ptr<WorkerCache> owned_workers, std::unique_ptr<Impl> impl);
  std::unique_ptr<WorkerCache> owned_workers_;  // declared first: outlives impl_
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_MASTER_SESSION_H_
