#include "distributed/remote_worker.h"

#include "absl/strings/str_cat.h"
#include "distributed/rpc/tensor_wire.h"
#include "base/status_macros.h"

namespace sluice {

RemoteWorker::RemoteWorker(std::string task, std::string address, RpcOptions options)
    : stub_(std::move(task), std::move(address), options) {}

absl::StatusOr<WorkerInfo> RemoteWorker::GetStatus() { return GetStatusWithin(0); }

absl::StatusOr<WorkerInfo> RemoteWorker::GetStatusWithin(int64_t timeout_ms) {
  ASSIGN_OR_RETURN(rpc::WorkerStatus status, stub_.GetStatus(timeout_ms));
  WorkerInfo info;
  info.task = status.task;
  info.incarnation = status.incarnation;
  for (const rpc::DeviceAttributes& d : status.devices) {
    info.devices.push_back({d.name, d.device_type, d.memory_limit});
  }
  if (info.task != stub_.task_name()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the server at the address of ", stub_.task_name(), " says it is ", info.task,
        ": the cluster spec and the running servers disagree"));
  }
  return info;
}

absl::StatusOr<std::string> RemoteWorker::RegisterGraph(
    const std::string& session_handle,
    const std::map<std::string, tensorflow::GraphDef>& partitions) {
  rpc::RegisterGraphRequest req;
  req.session_handle = session_handle;
  for (const auto& [device, def] : partitions) {
    if (!def.SerializeToString(&req.partitions[device])) {
      return absl::InternalError(absl::StrCat("cannot serialize the partition for ", device));
    }
  }
  return stub_.RegisterGraph(req);
}

absl::Status RemoteWorker::DeregisterGraph(const std::string& graph_handle) {
  return stub_.DeregisterGraph(graph_handle);
}

absl::Status RemoteWorker::RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) {
  rpc::RunGraphRequest req;
  req.graph_handle = args.graph_handle;
  req.step_id = args.step_id;
  req.timeout_ms = args.timeout_ms;
  req.retval_indices = args.retval_indices;
  for (const auto& [index, t] : args.feeds) RETURN_IF_ERROR(TensorToWire(t, &req.feeds[index]));
  ASSIGN_OR_RETURN(rpc::RunGraphResponse resp, stub_.RunGraph(req));
  for (const auto& [index, wire] : resp.retvals) {
    ASSIGN_OR_RETURN(Tensor t, TensorFromWire(wire));
    (*retvals)[index] = std::move(t);
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> RemoteWorker::RecvTensor(int64_t step_id, const std::string& key,
                                                int64_t timeout_ms) {
  return stub_.RecvTensor(step_id, key, timeout_ms);
}

absl::Status RemoteWorker::AbortStep(int64_t step_id, const absl::Status& reason) {
  return stub_.AbortStep(step_id, reason);
}

absl::Status RemoteWorker::CleanupStep(int64_t step_id) { return stub_.CleanupStep(step_id); }

absl::Status RemoteWorker::CollectivePush(const std::string& to_device, const std::string& key,
                                          const Tensor& value, int64_t timeout_ms) {
  return stub_.CollectivePush(to_device, key, value, timeout_ms);
}

}  // namespace sluice
