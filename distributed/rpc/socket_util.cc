#include "distributed/rpc/socket_util.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

struct AddrInfoDeleter {
  void operator()(addrinfo* p) const { freeaddrinfo(p); }
};

absl::StatusOr<std::unique_ptr<addrinfo, AddrInfoDeleter>> Resolve(const std::string& host, int port,
                                                                  bool passive) {
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* result = nullptr;
  const std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &result);
  if (rc != 0) {
    return absl::UnavailableError(absl::StrCat("cannot resolve host '", host, "': ", gai_strerror(rc)));
  }
  return std::unique_ptr<addrinfo, AddrInfoDeleter>(result);
}

// Connects `fd` (blocking) to `addr` within `timeout_ms`; 0 or an errno.
int ConnectWithin(int fd, const addrinfo* addr, int64_t timeout_ms) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int err = 0;
  if (connect(fd, addr->ai_addr, addr->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      while (true) {
        const int64_t left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 deadline - std::chrono::steady_clock::now())
                                 .count();
        if (left <= 0) {
          err = ETIMEDOUT;
          break;
        }
        pollfd p{fd, POLLOUT, 0};
        int rc = poll(&p, 1, static_cast<int>(left));
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0) {
          err = errno;
          break;
        }
        if (rc == 0) continue;  // re-checks the deadline
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        break;
      }
    }
  }
  fcntl(fd, F_SETFL, flags);
  return err;
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(absl::string_view host_port) {
  HostPort hp;
  absl::string_view port_text;
  if (!host_port.empty() && host_port[0] == '[') {
    size_t close = host_port.find(']');
    if (close == absl::string_view::npos || close + 1 >= host_port.size() ||
        host_port[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("bad address '", host_port, "': expected [host]:port"));
    }
    hp.host = std::string(host_port.substr(1, close - 1));
    port_text = host_port.substr(close + 2);
  } else {
    size_t colon = host_port.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad address '", host_port, "': expected host:port"));
    }
    hp.host = std::string(host_port.substr(0, colon));
    port_text = host_port.substr(colon + 1);
  }
  if (!absl::SimpleAtoi(port_text, &hp.port) || hp.port <= 0 || hp.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("bad address '", host_port, "': bad port"));
  }
  return hp;
}

void SetRpcSocketOptions(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void SetKeepalive(int fd) {
  int one = 1, idle = 60, interval = 10, count = 6;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
}

void SetSocketTimeouts(int fd, int64_t timeout_ms) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(timeout_ms / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout_ms % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

absl::StatusOr<int> ConnectTcp(const HostPort& address, int64_t timeout_ms) {
  auto resolved = Resolve(address.host, address.port, /*passive=*/false);
  if (!resolved.ok()) return resolved.status();
  int last_err = ECONNREFUSED;
  for (const addrinfo* a = resolved->get(); a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      last_err = errno;
      continue;
    }
    int err = ConnectWithin(fd, a, timeout_ms);
    if (err == 0) {
      SetRpcSocketOptions(fd);
      return fd;
    }
    close(fd);
    last_err = err;
  }
  if (last_err == ETIMEDOUT) {
    return absl::UnavailableError(absl::StrCat("connect timed out after ", timeout_ms, " ms"));
  }
  if (last_err == ECONNREFUSED) return absl::UnavailableError("connection refused");
  return absl::UnavailableError(absl::StrCat("cannot connect: ", ErrnoText(last_err)));
}

absl::StatusOr<int> ListenTcp(const std::string& host, int port, int* bound_port) {
  auto resolved = Resolve(host, port, /*passive=*/true);
  if (!resolved.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot listen on ", host, ":", port, ": ",
                                                   resolved.status().message()));
  }
  const addrinfo* a = resolved->get();
  int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port, ": socket: ",
                                               ErrnoText(errno)));
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 128) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port, ": ",
                                               err == EADDRINUSE ? "address already in use" : ErrnoText(err)));
  }
  sockaddr_storage bound;
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *bound_port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                  : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

}  // namespace sluice
