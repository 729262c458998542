#include "distributed/rpc/thrift_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <utility>

#include <thrift/TProcessor.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransportException.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "distributed/rpc/framed_transport.h"
#include "distributed/rpc/service_processor.h"
#include "distributed/rpc/socket_util.h"

namespace sluice {

using apache::thrift::transport::TTransportException;

namespace {

// Waits up to timeout_ms (< 0: no limit) for `fd` to have bytes (or be
// closed); false when none came.
bool WaitReadable(int fd, int64_t timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(timeout_ms, 1 << 30)));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // let the read report it
  }
}

// The sockets' send and receive timeout.
int64_t IoTimeoutMs(const ThriftServerOptions& options) {
  return options.io_timeout_ms > 0 ? std::min<int64_t>(options.io_timeout_ms, 1 << 30) : 60000;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ThriftServer>> ThriftServer::Start(
    const ThriftServerOptions& options, std::shared_ptr<rpc::WorkerServiceIf> worker,
    TensorSource* tensor_source, std::shared_ptr<rpc::MasterServiceIf> master) {
  // Thousands of waiting strangers plus the job's own connections need
  // more descriptors than the usual soft limit of 1,024.
  static const int64_t open_file_limit = RaiseOpenFileLimit();
  int port = 0;
  absl::StatusOr<int> fd = ListenTcp(options.host, options.port, &port);
  if (!fd.ok()) {
    return absl::Status(fd.status().code(),
                        absl::StrCat("task ", options.task_name, ": ", fd.status().message()));
  }
  std::shared_ptr<ServiceProcessor> mux = NewServiceProcessor(options.task_name, std::move(worker),
                                                        tensor_source, options.tensor_sink,
                                                        std::move(master));
  std::unique_ptr<ThriftServer> server(new ThriftServer(options, std::move(mux), port));
  ConnectionGateOptions gate;
  gate.task_name = options.task_name;
  gate.auth_timeout_ms = options.auth_timeout_ms;
  // A quarter of the descriptors stay for the job's own connections.
  gate.max_pending = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(options.max_pending_connections,
                                             open_file_limit > 0 ? open_file_limit * 3 / 4
                                                                 : options.max_pending_connections)));
  gate.max_frame_bytes = std::min<int64_t>(options.max_message_bytes, 0x7fffffff);
  gate.tls = options.tls;
  ThriftServer* s = server.get();
  absl::StatusOr<std::unique_ptr<ConnectionGate>> started = ConnectionGate::Start(
      std::move(gate), *fd, [s](AdmittedConnection c) { s->Admit(std::move(c)); });
  if (!started.ok()) return started.status();
  server->gate_ = *std::move(started);
  return server;
}

ThriftServer::ThriftServer(ThriftServerOptions options, std::shared_ptr<ServiceProcessor> mux,
                           int port)
    : options_(std::move(options)), mux_(std::move(mux)), port_(port) {}

ThriftServer::~ThriftServer() { Stop(); }

ConnectionGateCounts ThriftServer::gate_counts() const {
  return gate_ == nullptr ? ConnectionGateCounts{} : gate_->counts();
}

int ThriftServer::served_connections() const {
  absl::MutexLock lock(&mu_);
  return open_connections_;
}

void ThriftServer::Admit(AdmittedConnection admitted) {
  ReapFinished();
  const char* refusal = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      refusal = "";
    } else if (open_connections_ >= options_.max_connections) {
      refusal = "at its connection limit";
    } else {
      connections_.emplace_back();
      Connection* c = &connections_.back();
      c->fd = admitted.fd;
      c->tls = std::move(admitted.tls);
      c->peer = std::move(admitted.peer);
      try {
        c->thread = std::thread(&ThriftServer::Serve, this, c);
        ++open_connections_;
      } catch (const std::system_error&) {
        // No thread to serve it (the process's limit): refuse, do not die.
        admitted.tls = std::move(c->tls);
        connections_.pop_back();
        refusal = "out of threads";
      }
    }
  }
  if (refusal != nullptr) {
    Refuse(admitted, refusal);
  } else {
    refusing_ = false;
  }
}

void ThriftServer::Refuse(AdmittedConnection& admitted, const char* why) {
  if (admitted.tls.socket != nullptr) {
    admitted.tls.socket->close();  // closes the fd too
  } else {
    close(admitted.fd);
  }
  if (!refusing_ && *why != '\0') {
    std::fprintf(stderr, "ThriftServer %s: refused a connection from %s: %s (%d connections)\n",
                 options_.task_name.c_str(), admitted.address.c_str(), why,
                 options_.max_connections);
    refusing_ = true;
  }
}

void ThriftServer::Serve(Connection* c) {
  std::shared_ptr<apache::thrift::transport::TSocket> socket;
  if (c->tls.socket != nullptr) {
    socket = c->tls.socket;
  } else {
    socket = std::make_shared<apache::thrift::transport::TSocket>(c->fd);
  }
  const int io_timeout = static_cast<int>(IoTimeoutMs(options_));
  socket->setRecvTimeout(io_timeout);
  socket->setSendTimeout(io_timeout);
  std::string problem;
  if (c->tls.socket != nullptr) {
    // The gate ran the handshake; this only marks it done in the socket.
    absl::StatusOr<std::string> who = c->tls.Handshake();
    if (!who.ok()) problem = std::string(who.status().message());
  }
  if (problem.empty()) problem = ServeCalls(c, socket, c->tls, c->peer);
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    c->open = false;  // from here on Stop() leaves the fd alone
    c->in_call.store(false);  // (when the call threw)
    stopping = stopping_;
  }
  if (!problem.empty() && !stopping) {
    std::fprintf(stderr, "ThriftServer %s: dropped a connection: %s\n", options_.task_name.c_str(),
                 problem.c_str());
  }
  socket->close();
  absl::MutexLock lock(&mu_);
  c->done = true;
  --open_connections_;
}

bool ThriftServer::WaitForRequest(int fd, FramedTransport& transport, const TlsSocket& tls,
                                  int64_t io_timeout_ms) {
  // TLS may hold a decrypted request already.
  if (transport.buffered_bytes() > 0 ||
      (tls.socket != nullptr && tls.socket->hasPendingDataToRead())) {
    return true;
  }
  const int64_t idle_ms = options_.idle_timeout_ms;
  // On plaintext, one recv() waits and reads; its timeout is the socket's
  // (io_timeout_ms), so it serves only while that is within the idle time.
  // What it waited is known without reading the clock (a cost that showed
  // on every small call).
  int64_t waited_ms = 0;
  if (idle_ms <= 0 || idle_ms >= io_timeout_ms) {
    switch (transport.WaitForPeer()) {
      case FramedTransport::PeerWait::kReady:
        return true;
      case FramedTransport::PeerWait::kClosed:
        return false;
      case FramedTransport::PeerWait::kTimedOut:
        waited_ms = io_timeout_ms;  // the socket's receive timeout passed
        break;
      case FramedTransport::PeerWait::kUnsupported:
        break;
    }
  }
  if (idle_ms <= 0) return WaitReadable(fd, -1);
  return waited_ms < idle_ms && WaitReadable(fd, idle_ms - waited_ms);
}

std::string ThriftServer::ServeCalls(Connection* c,
                                     const std::shared_ptr<apache::thrift::transport::TSocket>& socket,
                                     const TlsSocket& tls, std::string& peer) {
  FramedTransportOptions framing;
  framing.max_frame_bytes = std::min<int64_t>(options_.max_message_bytes, 0x7fffffff);
  framing.frame_timeout_ms = options_.frame_timeout_ms;
  framing.frame_min_bytes_per_s = options_.frame_min_bytes_per_s;
  framing.socket_recv_timeout_ms = IoTimeoutMs(options_);
  auto transport = std::make_shared<FramedTransport>(socket, framing);
  // Strict reads: a message must start with the protocol version, so a
  // stray client (say, an HTTP request) is dropped at once. No string or
  // container is sized past its frame (FramedTransport refuses such reads;
  // the limits are the backstop).
  const int32_t limit = static_cast<int32_t>(framing.max_frame_bytes);
  auto protocol = std::make_shared<apache::thrift::protocol::TBinaryProtocolT<FramedTransport>>(
      transport, /*string_limit=*/limit, /*container_limit=*/limit, /*strict_read=*/true,
      /*strict_write=*/true);
  // The processor takes shared_ptr<TProtocol>: converted once here, not per
  // call (two atomic increments and decrements each time).
  const std::shared_ptr<apache::thrift::protocol::TProtocol> base_protocol = protocol;
  std::string problem;
  try {
    for (;;) {
      if (!WaitForRequest(c->fd, *transport, tls, IoTimeoutMs(options_))) break;
      // A request is coming: Stop() now waits for its reply (bounded by
      // drain_timeout_ms); once stopping, no new call starts. Atomics
      // rather than mu_ (two lock round trips per call showed on small
      // calls), without a full fence: a call that begins in the very
      // nanoseconds Stop() starts may find its connection shut under it,
      // as at the drain deadline; a call already running is waited for.
      c->in_call.store(true, std::memory_order_release);
      if (stopping_.load(std::memory_order_acquire)) {
        EndCall(c);
        break;
      }
      const bool more = mux_->ProcessNext(*transport, *transport, base_protocol, base_protocol,
                                         peer.empty() ? nullptr : &peer);
      EndCall(c);
      if (!more || stopping_.load(std::memory_order_acquire)) break;
    }
  } catch (const TTransportException& e) {
    // END_OF_FILE: the client hung up (or Stop() shut the socket down).
    if (e.getType() != TTransportException::END_OF_FILE &&
        e.getType() != TTransportException::NOT_OPEN &&
        e.getType() != TTransportException::TIMED_OUT) {
      problem = e.what();
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  return problem;
}

void ThriftServer::EndCall(Connection* c) {
  c->in_call.store(false, std::memory_order_release);
  // Stop() waits on mu_ for NoCallInFlight; a release of mu_ has it look
  // again.
  if (stopping_.load(std::memory_order_acquire)) {
    absl::MutexLock lock(&mu_);
  }
}

void ThriftServer::ReapFinished() {
  std::list<Connection> finished;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (Connection& c : finished) c.thread.join();
}

bool ThriftServer::NoCallInFlight() const {
  for (const Connection& c : connections_) {
    if (c.open && c.in_call.load()) return false;
  }
  return true;
}

void ThriftServer::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopping_.store(true);
  }
  // No connection is admitted from here on; those waiting are closed, and
  // so is the port.
  if (gate_ != nullptr) gate_->Stop();
  std::list<Connection> all;
  {
    absl::MutexLock lock(&mu_);
    // Idle connections close now (their threads see end of stream); those
    // inside a call once the reply is out, or at the drain deadline.
    for (Connection& c : connections_) {
      if (c.open && !c.in_call.load()) shutdown(c.fd, SHUT_RDWR);
    }
    // A call's end is an atomic store (EndCall), and the release of mu_
    // that follows it may miss a Stop() that began in the same instant:
    // look again every millisecond too.
    const absl::Time deadline =
        absl::Now() + absl::Milliseconds(std::max<int64_t>(options_.drain_timeout_ms, 0));
    while (!NoCallInFlight() && absl::Now() < deadline) {
      mu_.AwaitWithTimeout(absl::Condition(this, &ThriftServer::NoCallInFlight),
                           std::min(absl::Milliseconds(1), deadline - absl::Now()));
    }
    for (Connection& c : connections_) {
      if (c.open) shutdown(c.fd, SHUT_RDWR);
    }
    all.splice(all.end(), connections_);
  }
  for (Connection& c : all) c.thread.join();
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

}  // namespace sluice
