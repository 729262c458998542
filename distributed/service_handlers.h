// The Thrift faces of a task: WorkerServiceHandler turns WorkerService calls
// into calls on a Worker; MasterServiceHandler keeps the MasterSessions that
// remote clients create and runs their steps. Errors leave as rpc::RpcError
// (code + message, the message naming this task).
//
//   auto worker_handler = std::make_shared<WorkerServiceHandler>(worker.get());
//   auto master_handler = std::make_shared<MasterServiceHandler>(master_options);
//   ThriftServer::Start(opts, worker_handler, worker.get(), master_handler);
//
// Thread-safe. The worker and the options' pointers are borrowed.
#ifndef SLUICE_DISTRIBUTED_SERVICE_HANDLERS_H_
#define SLUICE_DISTRIBUTED_SERVICE_HANDLERS_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "distributed/master_session.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/worker.h"

namespace sluice {

class WorkerServiceHandler : public rpc::WorkerServiceIf {
 public:
  explicit WorkerServiceHandler(Worker* worker) : worker_(worker) {}

  void GetStatus(rpc::WorkerStatus& out) override;
  void RegisterGraph(rpc::RegisterGraphResponse& out, const rpc::RegisterGraphRequest& req) override;
  void DeregisterGraph(const std::string& graph_handle) override;
  void RunGraph(rpc::RunGraphResponse& out, const rpc::RunGraphRequest& req) override;
  // Never called: the server answers RecvTensor from the worker itself
  // (a TensorSource), without copying.
  void RecvTensor(rpc::RecvTensorResponse& out, const rpc::RecvTensorRequest& req) override;
  void AbortStep(int64_t step_id, int32_t code, const std::string& message) override;
  void CleanupStep(int64_t step_id) override;
  // Only reached by clients of the generic path: the server hands
  // CollectivePush to the worker's TensorSink without this copy.
  void CollectivePush(const std::string& to_device, const std::string& key,
                      const rpc::TensorWire& value, int64_t timeout_ms) override;

 private:
  Worker* const worker_;
};

class MasterServiceHandler : public rpc::MasterServiceIf {
 public:
  // `options` serve every session; each CreateSession's config overrides
  // the default device, soft placement and step timeout. A session no call
  // used for `session_idle_ttl` is closed (its client is gone); calls on it
  // then fail NotFound.
  explicit MasterServiceHandler(MasterSessionOptions options,
                                absl::Duration session_idle_ttl = absl::Hours(24))
      : options_(std::move(options)), session_idle_ttl_(session_idle_ttl) {}

  void CreateSession(rpc::CreateSessionResponse& out, const rpc::CreateSessionRequest& req) override;
  void ExtendSession(const std::string& session_handle, const std::string& graph_def) override;
  void RunStep(rpc::RunStepResponse& out, const rpc::RunStepRequest& req) override;
  void CloseSession(const std::string& session_handle) override;
  void ListDevices(std::vector<rpc::DeviceAttributes>& out) override;

 private:
  struct Entry {
    std::shared_ptr<MasterSession> session;
    absl::Time last_used;
  };
  std::shared_ptr<MasterSession> Find(const std::string& handle);
  // Takes the sessions idle past session_idle_ttl_ out of sessions_.
  std::vector<std::shared_ptr<MasterSession>> TakeIdleSessions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const MasterSessionOptions options_;
  const absl::Duration session_idle_ttl_;
  absl::Mutex mu_;
  std::map<std::string, Entry> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_SERVICE_HANDLERS_H_
