// RpcChannel: the connections from this process to one remote task, shared
// by WorkerStub and MasterStub. Each call takes an idle connection (or opens
// one), runs with socket send/receive timeouts, and turns every failure into
// a Status naming the task, its address and the method; a connection that
// failed is closed, never reused.
//
//   RpcChannel channel("/job:ps/replica:0/task:0", "127.0.0.1:4000", {});
//   rpc::WorkerStatus status;
//   RETURN_IF_ERROR(channel.Call("GetStatus", 5000, [&](RpcChannel::Connection& c) {
//     c.worker->GetStatus(status);
//     return absl::OkStatus();
//   }));
//
// A call on a pooled connection that the task closed while it sat idle
// (say, the task restarted) is sent once more on a new connection, but only
// when not a byte of the reply had come.
//
// Error codes: the task refuses, resets or closes the connection, or cannot
// be reached within connect_timeout_ms (or the call's timeout, when
// shorter, but at least 1 s) -> Unavailable; its TLS certificate
// is not of the job's CA or names another task -> Unauthenticated; no reply within the
// call's timeout -> DeadlineExceeded; an rpc::RpcError thrown by the
// server's handler -> its code, its message after "task T: ".
//
// Thread-safe: any number of concurrent calls (one connection each).
#ifndef SLUICE_DISTRIBUTED_RPC_RPC_CHANNEL_H_
#define SLUICE_DISTRIBUTED_RPC_RPC_CHANNEL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <thrift/protocol/TProtocol.h>
#include <thrift/transport/TSocket.h>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/tls_context.h"

namespace sluice {

struct RpcOptions {
  int64_t connect_timeout_ms = 3000;
  int64_t call_timeout_ms = 60000;  // per call unless the call says otherwise
  // WorkerStub::RecvTensor without an allocator receives into a
  // RecvBufferPool keeping up to this many bytes of freed tensors for
  // reuse; 0: the default CPU allocator (a fresh buffer every time).
  int64_t recv_buffer_pool_bytes = 512 << 20;
  // Mutual TLS (tls_context.h): each new connection's handshake runs within
  // connect_timeout_ms (or the call's timeout, when shorter, but at least
  // 1 s) and checks that the server's certificate names this
  // channel's task. Null: plaintext.
  std::shared_ptr<const TlsContext> tls;
};

class RpcChannel {
 public:
  // One open connection: framed binary Thrift over a TCP socket, with a
  // generated client per service (multiplexed as "worker" / "master").
  struct Connection {
    std::shared_ptr<apache::thrift::transport::TSocket> socket;
    std::shared_ptr<FramedTransport> transport;
    std::shared_ptr<apache::thrift::protocol::TProtocol> protocol;  // binary, not multiplexed
    std::unique_ptr<rpc::WorkerServiceClient> worker;
    std::unique_ptr<rpc::MasterServiceClient> master;
    int64_t timeout_ms = -1;  // the socket timeouts now set
    int64_t last_call_ms = 0;  // CoarseNowMs() when its last call began
  };

  RpcChannel(std::string task_name, std::string host_port, RpcOptions options);
  ~RpcChannel();
  RpcChannel(const RpcChannel&) = delete;
  RpcChannel& operator=(const RpcChannel&) = delete;

  const std::string& task_name() const { return task_name_; }
  const std::string& host_port() const { return host_port_; }
  const RpcOptions& options() const { return options_; }

  // Runs `call` on a connection whose send and receive timeouts are
  // `timeout_ms` (<= 0: none). `call` may throw Thrift exceptions and
  // rpc::RpcError; a Status it returns gets the task and method prepended.
  absl::Status Call(absl::string_view method, int64_t timeout_ms,
                    absl::FunctionRef<absl::Status(Connection&)> call);

  // Idle connections kept for reuse (for tests).
  int IdleConnectionsForTesting() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // An idle connection when `pooled` (and one is usable), else a new one,
  // connected (and its TLS handshake done) within connect_timeout_ms or the
  // call's `timeout_ms`, whichever is shorter.
  absl::StatusOr<std::unique_ptr<Connection>> Acquire(bool pooled, int64_t timeout_ms, bool* reused)
      ABSL_LOCKS_EXCLUDED(mu_);
  // One try of a call; `keep`: the connection is still in step;
  // `closed_before_reply`: it broke before any byte of the reply came.
  absl::Status Attempt(Connection& c, absl::string_view method, int64_t timeout,
                       absl::FunctionRef<absl::Status(Connection&)> call, bool* keep,
                       bool* closed_before_reply);
  void Release(std::unique_ptr<Connection> connection) ABSL_LOCKS_EXCLUDED(mu_);
  // False when an idle connection has gone stale (checked after 100 ms idle).
  static bool Usable(const Connection& c, int64_t now_ms);
  std::string Where() const;  // "task T at H:P"

  const std::string task_name_;
  const std::string host_port_;
  const RpcOptions options_;
  const absl::StatusOr<HostPort> address_;

  // The most recently released connection, taken without the lock (the
  // common case: calls one after another from one thread).
  std::atomic<Connection*> hot_{nullptr};
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_RPC_CHANNEL_H_
