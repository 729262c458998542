// TCP sockets for Sluice's RPC layer: listen, connect with a deadline, and
// the options every RPC connection gets.
//
//   ASSIGN_OR_RETURN(HostPort hp, ParseHostPort("127.0.0.1:4000"));
//   ASSIGN_OR_RETURN(int fd, ConnectTcp(hp, /*timeout_ms=*/3000));
//   int port;
//   ASSIGN_OR_RETURN(int lfd, ListenTcp("0.0.0.0", 0, &port));
//
// Errors describe the cause only ("connection refused", "connect timed out
// after 3000 ms"); callers add the task. The caller owns returned fds.
// Thread-safe (no shared state).
#ifndef SLUICE_DISTRIBUTED_RPC_SOCKET_UTIL_H_
#define SLUICE_DISTRIBUTED_RPC_SOCKET_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sluice {

struct HostPort {
  std::string host;
  int port = 0;
};

// "host:port" or "[v6addr]:port". InvalidArgument when malformed.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view host_port);

// A connected, blocking socket with TCP_NODELAY. Unavailable when the host
// cannot be resolved, refuses, or does not answer within `timeout_ms`.
absl::StatusOr<int> ConnectTcp(const HostPort& address, int64_t timeout_ms);

// A listening socket bound to host:port (port 0: any free port, returned in
// `*bound_port`). Unavailable when the address is taken.
absl::StatusOr<int> ListenTcp(const std::string& host, int port, int* bound_port);

// TCP_NODELAY (RPCs are request/response; never wait to coalesce).
void SetRpcSocketOptions(int fd);

// Sets SO_RCVTIMEO and SO_SNDTIMEO (0: none).
// TCP keepalive: a peer that vanished (host down, cable out) is found
// within about two minutes of silence instead of never.
void SetKeepalive(int fd);

void SetSocketTimeouts(int fd, int64_t timeout_ms);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_SOCKET_UTIL_H_
