// ThriftServer: one task's port, serving WorkerService ("worker") and
// MasterService ("master") multiplexed over framed binary Thrift, one thread
// per connection, up to options.max_connections of them.
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
  // Connections served at once; more are accepted and closed at once (one
  // line on stderr per burst).
  int max_connections = 256;
  // A connection with no request for this long is closed (clients open a
  // new one). 0: never.
  int64_t idle_timeout_ms = 10 * 60 * 1000;
  // A request (or reply) that stalls mid-frame for this long drops the
  // connection; TCP keepalive finds vanished peers. Bounds a TLS handshake.
  int64_t io_timeout_ms = 60 * 1000;
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
  const std::string& task_name() const { return options_.task_name; }

  // Stops accepting and closes every idle connection at once; a connection
  // inside a call is closed once its reply is written, or after
  // options.drain_timeout_ms. Then joins all threads (a handler still
  // waiting, say in the TensorSource, is waited for). Idempotent.
  void Stop();

 private:
  struct Connection {
    int fd = -1;
    bool open = true;   // fd not closed yet (guarded by mu_)
    std::atomic<bool> in_call{false};  // between reading a request and writing its reply
    bool done = false;
    std::thread thread;
  };

  ThriftServer(ThriftServerOptions options, std::shared_ptr<ServiceProcessor> mux,
               int listen_fd, int port);
  void AcceptLoop();
  void Serve(Connection* connection);
  // Answers calls until the peer leaves; what went wrong ("" for nothing).
  std::string ServeCalls(Connection* connection,
                         const std::shared_ptr<apache::thrift::transport::TSocket>& socket,
                         const TlsSocket& tls, std::string& peer);
  // Waits for the next request's first bytes; false when the connection is
  // to close (the peer left, or sent nothing for options_.idle_timeout_ms).
  bool WaitForRequest(int fd, FramedTransport& transport, const TlsSocket& tls,
                      int64_t io_timeout_ms);
  void LogRefusedHandshake(const std::string& address, const absl::Status& why);
  // Marks the connection's call finished (and tells a waiting Stop()).
  void EndCall(Connection* connection) ABSL_LOCKS_EXCLUDED(mu_);
  void ReapFinished() ABSL_LOCKS_EXCLUDED(mu_);
  // No open connection is inside a call (Stop's drain condition).
  bool NoCallInFlight() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Closes an accepted fd the server will not serve, logging the first of a
  // burst.
  void Refuse(int fd, const char* why);

  const ThriftServerOptions options_;
  const std::shared_ptr<ServiceProcessor> mux_;
  const int listen_fd_;
  const int port_;
  std::thread accept_thread_;

  absl::Mutex stop_mu_;  // serializes Stop()
  absl::Mutex mu_;
  std::atomic<bool> stopping_{false};  // set once, under mu_
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  int open_connections_ ABSL_GUARDED_BY(mu_) = 0;  // not yet done
  bool refusing_ = false;  // accept thread only: a refusal was logged
  absl::Mutex log_mu_;
  absl::Time last_refusal_logged_ ABSL_GUARDED_BY(log_mu_) = absl::InfinitePast();
  int64_t refusals_unlogged_ ABSL_GUARDED_BY(log_mu_) = 0;

};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_THRIFT_SERVER_H_
