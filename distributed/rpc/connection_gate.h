// ConnectionGate: where a task server's connections wait until they have
// shown who they are. One thread and one epoll set hold every connection
// that has not authenticated yet, so a stranger costs a file descriptor and
// a few hundred bytes, never a thread or a server slot (the design of
// nginx's and Envoy's listeners).
//
//   ConnectionGateOptions opts;  opts.tls = tls;  opts.task_name = "/job:ps/...";
//   ASSIGN_OR_RETURN(std::unique_ptr<ConnectionGate> gate,
//                    ConnectionGate::Start(opts, listen_fd, [&](AdmittedConnection c) {
//                      ... serve c on a thread of its own ...
//                    }));
//   gate->Stop();
//
// A connection is admitted once it is authenticated and its first request
// has begun to arrive:
//  - over TLS, the mutual-TLS handshake is done (a certificate of the job's
//    CA) and a first application record has arrived;
//  - in plaintext (no authentication exists), its first frame has arrived
//    whole, or its first 16 KiB of a larger one; a first frame over
//    max_frame_bytes, or one that is not strict binary Thrift, is closed.
// It must get there within auth_timeout_ms of being accepted, however it
// trickles its bytes, or it is closed. At most max_pending connections wait
// at once; a newcomer past that closes the one that has waited longest, so a
// flood of idle or slow strangers can delay a job member's handshake, never
// refuse it. Handshakes refused for the peer's credentials are logged on
// stderr, at most one line a second.
//
// Thread-safety: Start and Stop from any thread; `admit` runs on the gate's
// thread (it should hand the connection on quickly).
#ifndef SLUICE_DISTRIBUTED_RPC_CONNECTION_GATE_H_
#define SLUICE_DISTRIBUTED_RPC_CONNECTION_GATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "distributed/rpc/tls_context.h"

namespace sluice {

struct ConnectionGateOptions {
  std::string task_name;  // for log lines
  // Handshake and first request, from accept on.
  int64_t auth_timeout_ms = 3000;
  // Connections waiting to authenticate at once (also bounded by the
  // process's open-file limit).
  int max_pending = 4096;
  // Plaintext: the largest first frame let through.
  int64_t max_frame_bytes = 0x7fffffff;
  // Mutual TLS; null: plaintext.
  std::shared_ptr<const TlsContext> tls;
};

// A connection let through: a blocking socket, TLS already negotiated when
// the gate had a TlsContext. Owned by whoever receives it.
struct AdmittedConnection {
  int fd = -1;
  TlsSocket tls;         // empty in plaintext
  std::string peer;      // the authenticated identity ("" in plaintext)
  std::string address;   // the peer's numeric address
};

// What the gate has done since it started (for tests and benches).
struct ConnectionGateCounts {
  int64_t accepted = 0;
  int64_t admitted = 0;
  int64_t timed_out = 0;     // past auth_timeout_ms
  int64_t evicted = 0;       // closed to admit a newcomer
  int64_t refused = 0;       // a failed handshake or a peer that hung up
  int64_t pending = 0;       // waiting now
};

class ConnectionGate {
 public:
  using AdmitFn = std::function<void(AdmittedConnection)>;

  // Takes `listen_fd` (a listening socket; the gate closes it at Stop).
  static absl::StatusOr<std::unique_ptr<ConnectionGate>> Start(ConnectionGateOptions options,
                                                               int listen_fd, AdmitFn admit);
  ~ConnectionGate();  // Stop()
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Stops accepting, closes every waiting connection and the listener;
  // `admit` is not called once Stop returns. Idempotent.
  void Stop();

  ConnectionGateCounts counts() const;

 private:
  class Loop;
  struct CountsCell;
  ConnectionGate();

  std::unique_ptr<CountsCell> counts_;  // outlives loop_
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
};

// Raises this process's soft open-file limit to its hard limit (a server of
// thousands of connections needs more than the usual 1,024). The limit it
// has afterwards.
int64_t RaiseOpenFileLimit();

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_CONNECTION_GATE_H_
