#include "distributed/rpc/master_stub.h"

#include <algorithm>
#include <utility>

namespace sluice {

using Connection = RpcChannel::Connection;

MasterStub::MasterStub(std::string task_name, std::string host_port, RpcOptions options)
    : channel_(std::move(task_name), std::move(host_port), options) {}

absl::StatusOr<std::string> MasterStub::CreateSession(const rpc::CreateSessionRequest& req) {
  rpc::CreateSessionResponse out;
  absl::Status s = channel_.Call("CreateSession", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.master->CreateSession(out, req);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return std::move(out.session_handle);
}

absl::Status MasterStub::ExtendSession(const std::string& session_handle,
                                       const std::string& graph_def_bytes) {
  return channel_.Call("ExtendSession", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.master->ExtendSession(session_handle, graph_def_bytes);
    return absl::OkStatus();
  });
}

absl::StatusOr<rpc::RunStepResponse> MasterStub::RunStep(const rpc::RunStepRequest& req) {
  rpc::RunStepResponse out;
  // A step given a longer deadline than calls have is waited for that long
  // (plus the time to hear its DeadlineExceeded back).
  const int64_t timeout_ms =
      std::max<int64_t>(channel_.options().call_timeout_ms,
                        req.timeout_in_ms > 0 ? req.timeout_in_ms + 5000 : 0);
  absl::Status s = channel_.Call("RunStep", timeout_ms, [&](Connection& c) {
    c.master->RunStep(out, req);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::Status MasterStub::CloseSession(const std::string& session_handle) {
  return channel_.Call("CloseSession", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.master->CloseSession(session_handle);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<rpc::DeviceAttributes>> MasterStub::ListDevices() {
  std::vector<rpc::DeviceAttributes> out;
  absl::Status s = channel_.Call("ListDevices", channel_.options().call_timeout_ms, [&](Connection& c) {
    c.master->ListDevices(out);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace sluice
