// MasterStub: calls one remote task's MasterService. Thread-safe, pooled
// connections, deadlines and errors as in rpc_channel.h. Never throws.
//
//   MasterStub master("/job:chief/replica:0/task:0", "127.0.0.1:4000");
//   rpc::CreateSessionRequest req;  req.graph_def = graph_bytes;
//   ASSIGN_OR_RETURN(std::string session, master.CreateSession(req));
//   ASSIGN_OR_RETURN(rpc::RunStepResponse out, master.RunStep(step));
//   RETURN_IF_ERROR(master.CloseSession(session));
#ifndef SLUICE_DISTRIBUTED_RPC_MASTER_STUB_H_
#define SLUICE_DISTRIBUTED_RPC_MASTER_STUB_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/rpc_channel.h"

namespace sluice {

class MasterStub {
 public:
  MasterStub(std::string task_name, std::string host_port, RpcOptions options = {});

  const std::string& task_name() const { return channel_.task_name(); }
  const std::string& host_port() const { return channel_.host_port(); }

  // Returns the session handle.
  absl::StatusOr<std::string> CreateSession(const rpc::CreateSessionRequest& req);
  absl::Status ExtendSession(const std::string& session_handle, const std::string& graph_def_bytes);
  // Deadline: call_timeout_ms (raise it in RpcOptions for long steps).
  absl::StatusOr<rpc::RunStepResponse> RunStep(const rpc::RunStepRequest& req);
  absl::Status CloseSession(const std::string& session_handle);
  absl::StatusOr<std::vector<rpc::DeviceAttributes>> ListDevices();

  RpcChannel& channel() { return channel_; }

 private:
  RpcChannel channel_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_MASTER_STUB_H_
