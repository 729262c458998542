// WorkerStub: calls one remote task's WorkerService. Thread-safe; calls from
// many threads run on separate pooled connections (see rpc_channel.h for
// the pooling, deadlines and error codes). Never throws.
//
//   WorkerStub ps("/job:ps/replica:0/task:0", "127.0.0.1:4000");
//   ASSIGN_OR_RETURN(rpc::WorkerStatus status, ps.GetStatus());
//   ASSIGN_OR_RETURN(Tensor w, ps.RecvTensor(step_id, key, /*timeout_ms=*/30000));
//
// Errors name the task and its address: Unavailable when the task cannot be
// reached or drops the connection, DeadlineExceeded when no reply comes in
// time, and the server's own code for errors its handlers report.
#ifndef SLUICE_DISTRIBUTED_RPC_WORKER_STUB_H_
#define SLUICE_DISTRIBUTED_RPC_WORKER_STUB_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/recv_buffer_pool.h"
#include "distributed/rpc/rpc_channel.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

// Added to a call's own timeout (RunGraph's timeout_ms, RecvTensor's) so the
// server's deadline error arrives before the client gives up.
inline constexpr int64_t kRpcDeadlineMarginMs = 2000;

class WorkerStub {
 public:
  WorkerStub(std::string task_name, std::string host_port, RpcOptions options = {});

  const std::string& task_name() const { return channel_.task_name(); }
  const std::string& host_port() const { return channel_.host_port(); }

  absl::StatusOr<rpc::WorkerStatus> GetStatus();
  // With its own deadline (liveness probes); <= 0: call_timeout_ms.
  absl::StatusOr<rpc::WorkerStatus> GetStatus(int64_t timeout_ms);
  // Returns the graph handle.
  absl::StatusOr<std::string> RegisterGraph(const rpc::RegisterGraphRequest& req);
  absl::Status DeregisterGraph(const std::string& graph_handle);
  // Deadline: req.timeout_ms + kRpcDeadlineMarginMs when set, else call_timeout_ms.
  absl::StatusOr<rpc::RunGraphResponse> RunGraph(const rpc::RunGraphRequest& req);
  // The tensor's bytes go from the socket straight into a tensor allocated
  // from `allocator`; when null, from this stub's RecvBufferPool (host
  // memory reused across steps, see recv_buffer_pool.h), or the default CPU
  // allocator when RpcOptions::recv_buffer_pool_bytes is 0. Deadline: timeout_ms +
  // kRpcDeadlineMarginMs when timeout_ms > 0, else call_timeout_ms.
  // InvalidArgument when the reply's tensor is malformed.
  absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key, int64_t timeout_ms,
                                    Allocator* allocator = nullptr);
  absl::Status AbortStep(int64_t step_id, const absl::Status& reason);
  absl::Status CleanupStep(int64_t step_id);
  // Delivers a collective message into the task's mailbox. The tensor's
  // bytes go from `value`'s buffer to the socket (collective_push.h).
  // Deadline: timeout_ms when > 0, else call_timeout_ms.
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value, int64_t timeout_ms);

  RpcChannel& channel() { return channel_; }
  // The pool RecvTensor uses by default; null when disabled.
  RecvBufferPool* recv_buffer_pool() const { return pool_.get(); }

 private:
  RpcChannel channel_;
  std::shared_ptr<RecvBufferPool> pool_;  // null when disabled
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_WORKER_STUB_H_
