// RemoteWorker: the WorkerInterface of another task, over Thrift
// (distributed/rpc/worker_stub.h). Graphs travel serialized; tensors as raw
// bytes; RecvTensor's bytes land straight in the new tensor's memory.
//
//   auto w = std::make_unique<RemoteWorker>("/job:ps/replica:0/task:0", "127.0.0.1:4000");
//   ASSIGN_OR_RETURN(WorkerInfo info, w->GetStatus());
//
// Errors name the task and its address (connection refused, deadline...).
// Thread-safe.
#ifndef SLUICE_DISTRIBUTED_REMOTE_WORKER_H_
#define SLUICE_DISTRIBUTED_REMOTE_WORKER_H_

#include <memory>
#include <string>

#include "distributed/rpc/worker_stub.h"
#include "distributed/worker_interface.h"

namespace sluice {

class RemoteWorker : public WorkerInterface {
 public:
  RemoteWorker(std::string task, std::string address, RpcOptions options = {});

  absl::StatusOr<WorkerInfo> GetStatus() override;
  absl::StatusOr<std::string> RegisterGraph(
      const std::string& session_handle,
      const std::map<std::string, tensorflow::GraphDef>& partitions) override;
  absl::Status DeregisterGraph(const std::string& graph_handle) override;
  absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) override;
  absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key,
                                    int64_t timeout_ms) override;
  absl::Status AbortStep(int64_t step_id, const absl::Status& reason) override;
  absl::Status CleanupStep(int64_t step_id) override;
  // The tensor's bytes go from its buffer to the socket (no copy).
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value, int64_t timeout_ms) override;
  absl::StatusOr<WorkerInfo> GetStatusWithin(int64_t timeout_ms) override;
  std::string address() const override { return stub_.host_port(); }

 private:
  WorkerStub stub_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_REMOTE_WORKER_H_
