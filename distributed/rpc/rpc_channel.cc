#include "distributed/rpc/rpc_channel.h"

#include <poll.h>
#include <time.h>

#include <algorithm>
#include <climits>
#include <utility>

#include <thrift/TApplicationException.h>
#include <thrift/protocol/TBinaryProtocol.h>
#include <thrift/protocol/TMultiplexedProtocol.h>
#include <thrift/transport/TSSLSocket.h>
#include <thrift/transport/TTransportException.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/rpc/tensor_wire.h"

namespace sluice {

using apache::thrift::TApplicationException;
using apache::thrift::TException;
using apache::thrift::transport::TTransportException;

namespace {

// Idle connections kept per task: a step makes many transfers with one task
// at once (a ps worker fetches every parameter, the ps every gradient), and
// a connection dropped for want of room is a TLS handshake on the next step
// (16 made parameter-server steps 2x slower: worker_stub_test).
constexpr size_t kMaxIdleConnections = 64;
// A connection whose last call began longer ago than this is checked (one
// poll()) before reuse: the peer may have restarted meanwhile. Back-to-back
// short calls skip the check (a call longer than this leaves its connection
// checked once more, which costs one poll()).
constexpr int64_t kCheckIdleAfterMs = 100;
// The least time a new connection gets to connect and shake hands, however
// close its call is to its deadline.
constexpr int64_t kMinConnectMs = 1000;

// Milliseconds of the coarse monotonic clock (a few ms of resolution, read
// from memory): a precise clock read per call cost a tenth of a small
// RecvTensor's client-side time, and the idle check needs no precision.
int64_t CoarseNowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// True when an idle connection has something to read: the peer closed it
// (end of stream or reset) or sent bytes nobody asked for. Either way it is
// no longer usable.
bool IsStale(int fd) {
  if (fd < 0) return true;
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) != 0;
}

}  // namespace

RpcChannel::RpcChannel(std::string task_name, std::string host_port, RpcOptions options)
    : task_name_(std::move(task_name)),
      host_port_(std::move(host_port)),
      options_(options),
      address_(ParseHostPort(host_port_)) {}

RpcChannel::~RpcChannel() { delete hot_.exchange(nullptr); }

std::string RpcChannel::Where() const { return absl::StrCat("task ", task_name_, " at ", host_port_); }

int RpcChannel::IdleConnectionsForTesting() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(idle_.size()) + (hot_.load() != nullptr ? 1 : 0);
}

bool RpcChannel::Usable(const Connection& c, int64_t now_ms) {
  return now_ms - c.last_call_ms < kCheckIdleAfterMs ||
         !IsStale(c.socket->getSocketFD());
}

absl::StatusOr<std::unique_ptr<RpcChannel::Connection>> RpcChannel::Acquire(bool pooled,
                                                                         int64_t timeout_ms,
                                                                         bool* reused) {
  *reused = false;
  // One clock read per call: the connection's last call began then.
  const int64_t now_ms = CoarseNowMs();
  if (pooled) {
    std::unique_ptr<Connection> hot(hot_.exchange(nullptr, std::memory_order_acquire));
    if (hot != nullptr && Usable(*hot, now_ms)) {
      *reused = true;
      hot->last_call_ms = now_ms;
      return hot;
    }
    while (true) {
      std::unique_ptr<Connection> c;
      {
        absl::MutexLock lock(&mu_);
        if (idle_.empty()) break;
        c = std::move(idle_.back());
        idle_.pop_back();
      }
      if (Usable(*c, now_ms)) {
        *reused = true;
        c->last_call_ms = now_ms;
        return c;
      }
    }
  }
  if (!address_.ok()) return address_.status();
  // A call with a shorter deadline than connect_timeout_ms (a liveness
  // probe) does not wait much longer than that to connect: a stopped task's
  // kernel still completes the TCP handshake, and only the TLS handshake's
  // timeout would tell. A call near its deadline (a push that queued) still
  // gets kMinConnectMs, so a healthy peer is not refused for want of time.
  const int64_t connect_ms = std::max<int64_t>(
      timeout_ms > 0 ? std::min(options_.connect_timeout_ms, std::max(timeout_ms, kMinConnectMs))
                     : options_.connect_timeout_ms,
      1);
  absl::StatusOr<int> fd = ConnectTcp(*address_, connect_ms);
  if (!fd.ok()) return fd.status();
  auto c = std::make_unique<Connection>();
  c->last_call_ms = now_ms;
  if (options_.tls != nullptr) {
    // A channel named by address only (a remote session's target) takes any
    // task of the job.
    const std::string expected = absl::StartsWith(task_name_, "/job:") ? task_name_ : "";
    TlsSocket tls = options_.tls->Connect(*fd, expected);
    tls.socket->setRecvTimeout(static_cast<int>(connect_ms));
    tls.socket->setSendTimeout(static_cast<int>(connect_ms));
    absl::StatusOr<std::string> peer = tls.Handshake();
    if (!peer.ok()) return peer.status();
    c->socket = std::move(tls.socket);
  } else {
    c->socket = std::make_shared<apache::thrift::transport::TSocket>(*fd);
  }
  c->transport = std::make_shared<FramedTransport>(c->socket);
  c->protocol =
      std::make_shared<apache::thrift::protocol::TBinaryProtocolT<FramedTransport>>(
          c->transport, /*string_limit=*/0, /*container_limit=*/0, /*strict_read=*/true,
          /*strict_write=*/true);
  c->worker = std::make_unique<rpc::WorkerServiceClient>(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(c->protocol, "worker"));
  c->master = std::make_unique<rpc::MasterServiceClient>(
      std::make_shared<apache::thrift::protocol::TMultiplexedProtocol>(c->protocol, "master"));
  return c;
}

void RpcChannel::Release(std::unique_ptr<Connection> connection) {
  Connection* expected = nullptr;
  if (hot_.compare_exchange_strong(expected, connection.get(), std::memory_order_release)) {
    connection.release();
    return;
  }
  absl::MutexLock lock(&mu_);
  if (idle_.size() < kMaxIdleConnections) idle_.push_back(std::move(connection));
}

absl::Status RpcChannel::Attempt(Connection& c, absl::string_view method, int64_t timeout,
                                 absl::FunctionRef<absl::Status(Connection&)> call, bool* keep,
                                 bool* closed_before_reply) {
  *keep = true;
  *closed_before_reply = false;
  const uint64_t received = c.transport->received_bytes();
  try {
    if (c.timeout_ms != timeout) {
      c.socket->setRecvTimeout(static_cast<int>(timeout));
      c.socket->setSendTimeout(static_cast<int>(timeout));
      c.timeout_ms = timeout;
    }
    absl::Status status = call(c);
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(Where(), ": ", method, ": ", status.message()));
  } catch (const rpc::RpcError& e) {
    absl::Status remote = FromRpcError(e);
    return absl::Status(remote.code(), absl::StrCat("task ", task_name_, ": ", remote.message()));
  } catch (const TTransportException& e) {
    *keep = false;
    if (e.getType() == TTransportException::TIMED_OUT) {
      return absl::DeadlineExceededError(
          absl::StrCat(Where(), ": no reply to ", method, " within the deadline of ", timeout, " ms"));
    }
    *closed_before_reply = c.transport->received_bytes() == received;
    return absl::UnavailableError(
        absl::StrCat(Where(), ": connection lost during ", method, " (", e.what(), ")"));
  } catch (const TApplicationException& e) {
    // The exception message was read whole; the connection is still in step.
    return absl::Status(
        e.getType() == TApplicationException::UNKNOWN_METHOD ? absl::StatusCode::kUnimplemented
                                                              : absl::StatusCode::kInternal,
        absl::StrCat(Where(), ": ", method, " failed on the server: ", e.what()));
  } catch (const TException& e) {
    *keep = false;
    return absl::InternalError(absl::StrCat(Where(), ": bad reply to ", method, ": ", e.what()));
  } catch (const std::exception& e) {
    *keep = false;
    return absl::InternalError(absl::StrCat(Where(), ": ", method, ": ", e.what()));
  }
}

absl::Status RpcChannel::Call(absl::string_view method, int64_t timeout_ms,
                              absl::FunctionRef<absl::Status(Connection&)> call) {
  const int64_t timeout = timeout_ms > 0 ? std::min<int64_t>(timeout_ms, INT_MAX) : 0;
  for (int attempt = 0;; ++attempt) {
    bool reused;
    absl::StatusOr<std::unique_ptr<Connection>> acquired = Acquire(/*pooled=*/attempt == 0, timeout, &reused);
    if (!acquired.ok()) {
      return absl::Status(acquired.status().code(), absl::StrCat(Where(), ": ", method, ": ",
                                                                 acquired.status().message()));
    }
    bool keep, closed_before_reply;
    absl::Status status = Attempt(**acquired, method, timeout, call, &keep, &closed_before_reply);
    if (keep) Release(std::move(*acquired));
    // A pooled connection the peer had closed while it sat idle (a restarted
    // task) fails before any reply byte arrives: once more on a new one.
    if (!(reused && closed_before_reply)) return status;
  }
}

}  // namespace sluice
