#include "distributed/rpc/connection_gate.h"

#include <fcntl.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <list>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "distributed/rpc/socket_util.h"

namespace sluice {

namespace {

// A plaintext first frame is admitted once this much of it has arrived.
constexpr int kPlaintextAdmitBytes = 16 << 10;
// Accepts per wake-up, so that a flood of new connections does not starve
// the handshakes of those already waiting.
constexpr int kAcceptBurst = 256;
// After running out of descriptors with nothing to evict, accept() rests.
constexpr absl::Duration kAcceptPause = absl::Milliseconds(100);

std::string PeerAddress(int fd) {
  sockaddr_storage peer;
  socklen_t len = sizeof(peer);
  char host[64] = "?";
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0) {
    (void)getnameinfo(reinterpret_cast<sockaddr*>(&peer), len, host, sizeof(host), nullptr, 0,
                      NI_NUMERICHOST);
  }
  return host;
}

void SetBlocking(int fd, bool blocking) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0) return;
  (void)fcntl(fd, F_SETFL, blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK));
}

}  // namespace

int64_t RaiseOpenFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -1;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? INT64_MAX : static_cast<int64_t>(limit.rlim_cur);
}

struct ConnectionGate::CountsCell {
  absl::Mutex mu;
  ConnectionGateCounts counts ABSL_GUARDED_BY(mu);
};

// The event loop; it runs on the gate's thread.
class ConnectionGate::Loop {
 public:
  Loop(ConnectionGateOptions options, int listen_fd, int epoll_fd, int wake_fd, AdmitFn admit,
       CountsCell* counts)
      : options_(std::move(options)),
        counts_(counts),
        listen_fd_(listen_fd),
        epoll_fd_(epoll_fd),
        wake_fd_(wake_fd),
        admit_(std::move(admit)) {}

  ~Loop() {
    while (!waiting_.empty()) Close(waiting_.begin(), nullptr);
    close(listen_fd_);
    close(epoll_fd_);
    close(wake_fd_);
  }

  void Run() {
    epoll_event events[256];
    for (;;) {
      const int n = epoll_wait(epoll_fd_, events, 256, TimeoutMs(absl::Now()));
      if (n < 0 && errno != EINTR) {
        std::fprintf(stderr, "ThriftServer %s: epoll_wait: %s\n", options_.task_name.c_str(),
                     std::strerror(errno));
        return;
      }
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == wake_fd_) return;  // Stop()
        if (fd == listen_fd_) {
          AcceptAll();
          continue;
        }
        auto found = by_fd_.find(fd);
        if (found != by_fd_.end()) Advance(found->second);
      }
      const absl::Time now = absl::Now();
      ExpireDue(now);
      if (accept_paused_ && now >= accept_resume_) WatchListener();
    }
  }

  void Wake() {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }

  bool WatchListener() {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_fd_;
    accept_paused_ = false;
    return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev) == 0;
  }

  bool WatchWake() {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd_;
    return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) == 0;
  }

 private:
  struct Waiting {
    int fd;
    absl::Time deadline;
    std::unique_ptr<TlsHandshake> tls;  // made when its first bytes arrive
    bool want_write = false;
  };
  using Iter = std::list<Waiting>::iterator;

  int TimeoutMs(absl::Time now) const {
    absl::Time next = absl::InfiniteFuture();
    if (!waiting_.empty()) next = waiting_.front().deadline;
    if (accept_paused_) next = std::min(next, accept_resume_);
    if (next == absl::InfiniteFuture()) return -1;
    if (next <= now) return 0;
    return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(
                                                  next - now, absl::Milliseconds(1))),
                                              1 << 30));
  }

  void Count(int64_t ConnectionGateCounts::*field) {
    absl::MutexLock lock(&counts_->mu);
    ++(counts_->counts.*field);
    counts_->counts.pending = static_cast<int64_t>(waiting_.size());
  }

  void AcceptAll() {
    for (int i = 0; i < kAcceptBurst; ++i) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return;
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && !waiting_.empty()) {
          Evict();  // frees a descriptor for the newcomer
          continue;
        }
        // Out of descriptors with nobody to evict (the server's own
        // connections hold them), or out of memory: rest a while.
        Log(absl::StrCat("accept: ", std::strerror(errno), "; pausing"));
        (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accept_paused_ = true;
        accept_resume_ = absl::Now() + kAcceptPause;
        return;
      }
      if (static_cast<int>(waiting_.size()) >= std::max(options_.max_pending, 1)) Evict();
      SetRpcSocketOptions(fd);
      SetKeepalive(fd);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
      ev.data.fd = fd;
      if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
        close(fd);
        continue;
      }
      waiting_.push_back(
          Waiting{fd, absl::Now() + absl::Milliseconds(options_.auth_timeout_ms), nullptr});
      by_fd_[fd] = std::prev(waiting_.end());
      Count(&ConnectionGateCounts::accepted);
    }
  }

  // The connection that has waited longest makes room for a newcomer.
  void Evict() {
    Close(waiting_.begin(), &ConnectionGateCounts::evicted);
    if (++evicted_unlogged_ == 1 || absl::Now() - last_evict_log_ > absl::Seconds(10)) {
      Log(absl::StrCat("closed ", evicted_unlogged_,
                       " connection(s) that had not authenticated, to admit newer ones (",
                       options_.max_pending, " may wait)"));
      evicted_unlogged_ = 0;
      last_evict_log_ = absl::Now();
    }
  }

  void Advance(Iter it) {
    if (options_.tls == nullptr) {
      AdvancePlaintext(it);
      return;
    }
    if (it->tls == nullptr) {
      it->tls = options_.tls->StartAccept(it->fd);
      if (it->tls == nullptr) {
        Close(it, &ConnectionGateCounts::refused);
        return;
      }
    }
    switch (it->tls->Step()) {
      case TlsHandshake::State::kReady:
        Admit(it);
        return;
      case TlsHandshake::State::kWantRead:
        SetWantWrite(it, false);
        return;
      case TlsHandshake::State::kWantWrite:
        SetWantWrite(it, true);
        return;
      case TlsHandshake::State::kFailed: {
        const absl::Status& why = it->tls->error();
        // A peer that only hung up (a port scan, a client giving up) is
        // not worth a line; a refusal of its credentials is.
        if (why.code() == absl::StatusCode::kUnauthenticated) {
          LogRefusal(PeerAddress(it->fd), std::string(why.message()));
        }
        Close(it, &ConnectionGateCounts::refused);
        return;
      }
    }
  }

  void AdvancePlaintext(Iter it) {
    int available = 0;
    if (ioctl(it->fd, FIONREAD, &available) != 0) available = 0;
    if (available == 0) {
      char byte;
      const ssize_t n = recv(it->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        Close(it, &ConnectionGateCounts::refused);  // hung up before asking anything
      }
      return;
    }
    if (available < 6) return;
    uint8_t header[6];
    if (recv(it->fd, header, 6, MSG_PEEK | MSG_DONTWAIT) != 6) return;
    const uint32_t length = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                            (uint32_t{header[2]} << 8) | uint32_t{header[3]};
    // Framed strict binary Thrift: a frame the server accepts, whose
    // message begins with the protocol's version. Anything else (an HTTP
    // request, a TLS client, a scan) is closed here.
    if (length > options_.max_frame_bytes || header[4] != 0x80 || header[5] != 0x01) {
      LogRefusal(PeerAddress(it->fd), "not a framed Thrift request");
      Close(it, &ConnectionGateCounts::refused);
      return;
    }
    if (available >= std::min<int64_t>(int64_t{length} + 4, kPlaintextAdmitBytes)) Admit(it);
  }

  void SetWantWrite(Iter it, bool want_write) {
    if (it->want_write == want_write) return;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (want_write ? EPOLLOUT : 0);
    ev.data.fd = it->fd;
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, it->fd, &ev);
    it->want_write = want_write;
  }

  void Admit(Iter it) {
    AdmittedConnection c;
    c.fd = it->fd;
    c.address = PeerAddress(it->fd);
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->fd, nullptr);
    if (it->tls != nullptr) {
      c.peer = it->tls->peer();
      c.tls = it->tls->Release();  // TSSLSocket drives a non-blocking fd itself
    } else {
      SetBlocking(it->fd, true);  // TSocket reads with SO_RCVTIMEO
    }
    by_fd_.erase(it->fd);
    waiting_.erase(it);
    Count(&ConnectionGateCounts::admitted);
    admit_(std::move(c));
  }

  // Closes a waiting connection (field: what to count, or null). Counted,
  // and the pending count updated, before the descriptor closes: a peer
  // that sees its end sees it counted.
  void Close(Iter it, int64_t ConnectionGateCounts::*field) {
    const int fd = it->fd;
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    it->tls.reset();  // frees the TLS state before its fd goes
    // Unread bytes would make close() reset the connection; read, the peer
    // sees an orderly end of stream.
    char scratch[4096];
    for (int i = 0; i < 16 && recv(fd, scratch, sizeof(scratch), MSG_DONTWAIT) > 0; ++i) {
    }
    by_fd_.erase(fd);
    waiting_.erase(it);
    if (field != nullptr) Count(field);
    close(fd);
  }

  void ExpireDue(absl::Time now) {
    while (!waiting_.empty() && waiting_.front().deadline <= now) {
      Close(waiting_.begin(), &ConnectionGateCounts::timed_out);
    }
  }

  void Log(const std::string& line) {
    std::fprintf(stderr, "ThriftServer %s: %s\n", options_.task_name.c_str(), line.c_str());
  }

  // One line per refusal, at most one a second (a scan would flood the
  // log); how many more were refused is said with the next line.
  void LogRefusal(const std::string& address, const std::string& why) {
    const absl::Time now = absl::Now();
    if (now - last_refusal_logged_ < absl::Seconds(1)) {
      ++refusals_unlogged_;
      return;
    }
    Log(absl::StrCat("refused a connection from ", address, ": ", why,
                     refusals_unlogged_ > 0
                         ? absl::StrCat(" (", refusals_unlogged_, " more refused since the last line)")
                         : ""));
    last_refusal_logged_ = now;
    refusals_unlogged_ = 0;
  }

  const ConnectionGateOptions options_;
  CountsCell* const counts_;  // the gate's; outlives the loop
  const int listen_fd_;
  const int epoll_fd_;
  const int wake_fd_;
  const AdmitFn admit_;

  std::list<Waiting> waiting_;  // in accept order: the first is due first
  absl::flat_hash_map<int, Iter> by_fd_;
  bool accept_paused_ = false;
  absl::Time accept_resume_;
  absl::Time last_refusal_logged_ = absl::InfinitePast();
  int64_t refusals_unlogged_ = 0;
  absl::Time last_evict_log_ = absl::InfinitePast();
  int64_t evicted_unlogged_ = 0;
};

absl::StatusOr<std::unique_ptr<ConnectionGate>> ConnectionGate::Start(
    ConnectionGateOptions options, int listen_fd, AdmitFn admit) {
  SetBlocking(listen_fd, false);
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  const int wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd < 0 || wake_fd < 0) {
    const std::string why = std::strerror(errno);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
    close(listen_fd);
    return absl::ResourceExhaustedError(
        absl::StrCat("task ", options.task_name, ": no event loop for connections: ", why));
  }
  std::unique_ptr<ConnectionGate> gate(new ConnectionGate());
  gate->loop_ = std::make_unique<Loop>(std::move(options), listen_fd, epoll_fd, wake_fd,
                                       std::move(admit), gate->counts_.get());
  if (!gate->loop_->WatchListener() || !gate->loop_->WatchWake()) {
    return absl::InternalError(absl::StrCat("epoll_ctl: ", std::strerror(errno)));
  }
  gate->thread_ = std::thread([g = gate.get()] { g->loop_->Run(); });
  return gate;
}

ConnectionGate::ConnectionGate() : counts_(std::make_unique<CountsCell>()) {}

ConnectionGate::~ConnectionGate() { Stop(); }

void ConnectionGate::Stop() {
  if (stopped_.exchange(true)) return;
  loop_->Wake();
  if (thread_.joinable()) thread_.join();
  loop_.reset();  // closes the waiting connections and the listener
}

ConnectionGateCounts ConnectionGate::counts() const {
  absl::MutexLock lock(&counts_->mu);
  return counts_->counts;
}

}  // namespace sluice
