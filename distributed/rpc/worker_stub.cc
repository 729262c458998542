#include "distributed/rpc/worker_stub.h"

#include <utility>

#include "distributed/rpc/collective_push.h"
#include "distributed/rpc/recv_tensor_reply.h"

namespace sluice {

using Connection = RpcChannel::Connection;

WorkerStub::WorkerStub(std::string task_name, std::string host_port, RpcOptions options)
    : channel_(std::move(task_name), std::move(host_port), options),
      pool_(options.recv_buffer_pool_bytes > 0
                ? std::make_shared<RecvBufferPool>(options.recv_buffer_pool_bytes)
                : nullptr) {}

absl::StatusOr<rpc::WorkerStatus> WorkerStub::GetStatus() {
  return GetStatus(channel_.options().call_timeout_ms);
}

absl::StatusOr<rpc::WorkerStatus> WorkerStub::GetStatus(int64_t timeout_ms) {
  const int64_t timeout = timeout_ms > 0 ? timeout_ms : channel_.options().call_timeout_ms;
  rpc::WorkerStatus out;
  absl::Status s = channel_.Call("GetStatus", timeout, [&](Connection& c) {
    c.worker->GetStatus(out);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::string> WorkerStub::RegisterGraph(const rpc::RegisterGraphRequest& req) {
  rpc::RegisterGraphResponse out;
  absl::Status s = channel_.Call("RegisterGraph", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.worker->RegisterGraph(out, req);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return std::move(out.graph_handle);
}

absl::Status WorkerStub::DeregisterGraph(const std::string& graph_handle) {
  return channel_.Call("DeregisterGraph", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.worker->DeregisterGraph(graph_handle);
    return absl::OkStatus();
  });
}

absl::StatusOr<rpc::RunGraphResponse> WorkerStub::RunGraph(const rpc::RunGraphRequest& req) {
  const int64_t timeout =
      req.timeout_ms > 0 ? req.timeout_ms + kRpcDeadlineMarginMs : channel_.options().call_timeout_ms;
  rpc::RunGraphResponse out;
  absl::Status s = channel_.Call("RunGraph", timeout, [&](Connection& c) {
    c.worker->RunGraph(out, req);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<Tensor> WorkerStub::RecvTensor(int64_t step_id, const std::string& key,
                                              int64_t timeout_ms, Allocator* allocator) {
  const int64_t timeout =
      timeout_ms > 0 ? timeout_ms + kRpcDeadlineMarginMs : channel_.options().call_timeout_ms;
  if (allocator == nullptr) allocator = pool_ != nullptr ? pool_.get() : DefaultCpuAllocator();
  Tensor out;
  absl::Status s = channel_.Call("RecvTensor", timeout, [&](Connection& c) {
    // The bytes WorkerServiceClient::send_RecvTensor and recv_RecvTensor
    // would write and read through the TMultiplexedProtocol, by hand.
    WriteRecvTensorCall(*c.transport, step_id, key, timeout_ms);
    absl::StatusOr<Tensor> t = ReadRecvTensorReply(*c.transport, c.protocol.get(), allocator);
    if (!t.ok()) return t.status();
    out = *std::move(t);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::Status WorkerStub::AbortStep(int64_t step_id, const absl::Status& reason) {
  return channel_.Call("AbortStep", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.worker->AbortStep(step_id, static_cast<int32_t>(reason.code()), std::string(reason.message()));
    return absl::OkStatus();
  });
}

absl::Status WorkerStub::CleanupStep(int64_t step_id) {
  return channel_.Call("CleanupStep", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.worker->CleanupStep(step_id);
    return absl::OkStatus();
  });
}

absl::Status WorkerStub::CollectivePush(const std::string& to_device, const std::string& key,
                                        const Tensor& value, int64_t timeout_ms) {
  const int64_t timeout = timeout_ms > 0 ? timeout_ms : channel_.options().call_timeout_ms;
  return channel_.Call("CollectivePush", timeout, [&](Connection& c) {
    WriteCollectivePushCall(c.protocol.get(), to_device, key, value, timeout_ms);
    c.worker->recv_CollectivePush();
    return absl::OkStatus();
  });
}

}  // namespace sluice
