// ThriftServer: one task's port, serving WorkerService ("worker") and
// MasterService ("master") multiplexed over framed binary Thrift. A new
// connection waits in a ConnectionGate (one event loop, no thread of its
// own) until it has authenticated and begun its first request; then it gets
// a thread, up to options.max_connections of them.
//
//   ThriftServerOptions opts;
//   opts.port = 4000;  opts.task_name = "/job:ps/replica:0/task:0";
//   ASSIGN_OR_RETURN(std::unique_ptr<ThriftServer> server,
//                    ThriftServer::Start(opts, worker_handler, &tensor_source, nullptr));
//   ... server->port() ...
//   server->Stop();   // or let it go out of scope
//
// RecvTensor calls on the worker service are answered from `tensor_source`
// without copying: the reply's tensor bytes go from the tensor's buffer to the
// socket (see recv_tensor_reply.h). CollectivePush calls go to
// options.tensor_sink when set, their bytes read straight into the pushed
// tensor (collective_push.h). Every other call reaches the handlers.
// Handlers report errors by throwing rpc::RpcError (see tensor_wire.h,
// ToRpcError); any other exception becomes a TApplicationException.
//
// Clients: WorkerStub / MasterStub, or any Thrift client speaking framed
// binary (strict, Thrift's default) with TMultiplexedProtocol ("worker" /
// "master"). A connection that sends anything else is closed.
//
// Thread-safety: Start, port and Stop may be called from any thread; the
// handlers and the TensorSource are called concurrently from connection
// threads. Ownership: the server shares the handlers; `tensor_source` is
// borrowed and must outlive the server.
#ifndef SLUICE_DISTRIBUTED_RPC_THRIFT_SERVER_H_
#define SLUICE_DISTRIBUTED_RPC_THRIFT_SERVER_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/rpc/connection_gate.h"
#include "distributed/rpc/gen-cpp/MasterService.h"
#include "distributed/rpc/gen-cpp/WorkerService.h"
#include "distributed/rpc/tensor_sink.h"
#include "distributed/rpc/tensor_source.h"
#include "distributed/rpc/tls_context.h"
#include "runtime/tensor.h"

namespace apache::thrift::transport {
class TSocket;
}  // namespace apache::thrift::transport

namespace sluice {

class FramedTransport;
class ServiceProcessor;

// TensorSource: distributed/rpc/tensor_source.h.

struct ThriftServerOptions {
  std::string host = "127.0.0.1";  // "0.0.0.0" for all interfaces
  int port = 0;                    // 0: pick a free port
  std::string task_name;           // for error messages, e.g. "/job:ps/replica:0/task:0"
  // Where CollectivePush calls on the worker service go without copying
  // (their tensor bytes land in memory from its PushAllocator); null: to the
  // worker handler (the generated, copying path). Borrowed; must outlive
  // the server.
  TensorSink* tensor_sink = nullptr;

  // Limits against peers that misbehave or attack (SECURITY.md).
  // The largest request frame: larger ones close the connection, and no
  // string or container of a request is sized past its frame.
  int64_t max_message_bytes = int64_t{1} << 30;
  // Authenticated connections served at once, each on a thread; past
  // this, a newly authenticated one is closed (one line on stderr per
  // burst). Strangers never take these slots: they wait in the gate.
  int max_connections = 1024;
  // Connections that have not authenticated yet, waiting in the gate at
  // once (the oldest is closed to admit a newcomer), and how long each may
  // take for its handshake and the start of its first request
  // (connection_gate.h).
  int max_pending_connections = 4096;
  int64_t auth_timeout_ms = 3000;
  // A connection with no request for this long is closed (clients open a
  // new one). 0: never.
  int64_t idle_timeout_ms = 10 * 60 * 1000;
  // A reply that stalls mid-frame for this long drops the connection; TCP
  // keepalive finds vanished peers.
  int64_t io_timeout_ms = 60 * 1000;
  // A request frame must arrive whole within frame_timeout_ms plus its
  // size at frame_min_bytes_per_s, however its bytes trickle in.
  int64_t frame_timeout_ms = 30 * 1000;
  int64_t frame_min_bytes_per_s = 1 << 20;
  // Stop() lets a call already inside a handler finish and write its reply
  // for up to this long before it closes the connection under it: a peer
  // whose request was acted on (say, a collective chunk delivered just
  // before this process exits) gets its answer, not a broken connection.
  int64_t drain_timeout_ms = 2000;
  // Mutual TLS on every connection (tls_context.h): a peer without a
  // certificate of the job's CA is refused at the handshake, with a line on
  // stderr naming its address. Null: plaintext, anyone may call.
  std::shared_ptr<const TlsContext> tls;
};

class ThriftServer {
 public:
  // Binds and listens before returning (Unavailable naming host:port when
  // the port is taken, InvalidArgument for a bad host), then serves on
  // background threads. Either handler may be null (that service is absent);
  // RecvTensor is answered from `tensor_source` only (null: Unimplemented).
  static absl::StatusOr<std::unique_ptr<ThriftServer>> Start(
      const ThriftServerOptions& options, std::shared_ptr<rpc::WorkerServiceIf> worker,
      TensorSource* tensor_source, std::shared_ptr<rpc::MasterServiceIf> master);

  ~ThriftServer();  // Stop()
  ThriftServer(const ThriftServer&) = delete;
  ThriftServer& operator=(const ThriftServer&) = delete;

  int port() const { return port_; }
  // What the gate did so far (connection_gate.h).
  ConnectionGateCounts gate_counts() const;
  // Connections on threads now.
  int served_connections() const;
  const std::string& task_name() const { return options_.task_name; }

  // Stops accepting and closes every idle connection at once; a connection
  // inside a call is closed once its reply is written, or after
  // options.drain_timeout_ms. Then joins all threads (a handler still
  // waiting, say in the TensorSource, is waited for). Idempotent.
  void Stop();

 private:
  struct Connection {
    int fd = -1;
    TlsSocket tls;     // the gate's handshake, done (empty in plaintext)
    std::string peer;  // the authenticated identity
    bool open = true;   // fd not closed yet (guarded by mu_)
    std::atomic<bool> in_call{false};  // between reading a request and writing its reply
    bool done = false;
    std::thread thread;
  };

  ThriftServer(ThriftServerOptions options, std::shared_ptr<ServiceProcessor> mux, int port);
  // Takes a connection from the gate: a thread of its own, or a refusal
  // past max_connections.
  void Admit(AdmittedConnection admitted);
  void Serve(Connection* connection);
  // Answers calls until the peer leaves; what went wrong ("" for nothing).
  std::string ServeCalls(Connection* connection,
                         const std::shared_ptr<apache::thrift::transport::TSocket>& socket,
                         const TlsSocket& tls, std::string& peer);
  // Waits for the next request's first bytes; false when the connection is
  // to close (the peer left, or sent nothing for options_.idle_timeout_ms).
  bool WaitForRequest(int fd, FramedTransport& transport, const TlsSocket& tls,
                      int64_t io_timeout_ms);
  // Marks the connection's call finished (and tells a waiting Stop()).
  void EndCall(Connection* connection) ABSL_LOCKS_EXCLUDED(mu_);
  void ReapFinished() ABSL_LOCKS_EXCLUDED(mu_);
  // No open connection is inside a call (Stop's drain condition).
  bool NoCallInFlight() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes an admitted connection the server will not serve, logging the
  // first of a burst.
  void Refuse(AdmittedConnection& admitted, const char* why);

  const ThriftServerOptions options_;
  const std::shared_ptr<ServiceProcessor> mux_;
  const int port_;
  std::unique_ptr<ConnectionGate> gate_;

  absl::Mutex stop_mu_;  // serializes Stop()
  mutable absl::Mutex mu_;
  std::atomic<bool> stopping_{false};  // set once, under mu_
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  int open_connections_ ABSL_GUARDED_BY(mu_) = 0;  // not yet done
  bool refusing_ = false;  // gate thread only: a refusal was logged
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_THRIFT_SERVER_H_
