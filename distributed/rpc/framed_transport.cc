#include "distributed/rpc/framed_transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <thrift/transport/TSSLSocket.h>

#include "absl/strings/str_cat.h"

namespace sluice {

using apache::thrift::transport::TSocket;
using apache::thrift::transport::TTransport;
using apache::thrift::transport::TTransportException;

namespace {

constexpr size_t kInitialWriteBuffer = 4 << 10;
// The longest read handed to the inner transport at once (see ReadSlow).
constexpr uint32_t kMaxInnerRead = 64 << 20;
// A write buffer grown past this (a message of many small fields) is given
// back after its frame is sent.
constexpr size_t kRetainedWriteBuffer = 1 << 20;
// WriteKept's pipe: vmsplice() moves at most its capacity at once. 1 MiB is
// Linux's default limit for unprivileged processes; a smaller pipe works too.
constexpr int kPipeBytes = 1 << 20;

// splice() into a socket the peer has closed raises SIGPIPE (it has no
// MSG_NOSIGNAL). While one of these lives, SIGPIPE is blocked on this
// thread, and one raised meanwhile is taken off again before unblocking.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    pending_before_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~ScopedSigpipeBlock() {
    sigset_t pending;
    if (!pending_before_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const struct timespec now = {0, 0};
      while (sigtimedwait(&pipe_, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool pending_before_ = false;
};

[[noreturn]] void ThrowSendError(int err) {
  if (err == EAGAIN || err == EWOULDBLOCK) {
    throw TTransportException(TTransportException::TIMED_OUT, "send timed out");
  }
  throw TTransportException(TTransportException::NOT_OPEN,
                            absl::StrCat("send failed: ", std::strerror(err)));
}

// recv() and send() without glibc's cancellation-point wrappers: in a
// multi-threaded process each call otherwise switches the thread's
// cancellation state twice (two atomic compare-and-swaps around the system
// call): 0.007 of the 4-byte round trip's ratio to raw TCP, 3 alternating
// runs each. Sluice never cancels threads.
ssize_t Recv(int fd, void* buf, size_t len, int flags) {
  return syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
}
ssize_t Send(int fd, const void* buf, size_t len, int flags) {
  return syscall(SYS_sendto, fd, buf, len, flags, nullptr, 0);
}

}  // namespace

FramedTransport::FramedTransport(std::shared_ptr<TTransport> inner,
                                 FramedTransportOptions options)
    : TVirtualTransport<FramedTransport>(inner->getConfiguration()),
      inner_(std::move(inner)),
      socket_(dynamic_cast<TSocket*>(inner_.get())),
      // TLS (a TSSLSocket is a TSocket too) is written through the inner
      // transport: the fd carries ciphertext, never plaintext sent around it.
      tls_(dynamic_cast<apache::thrift::transport::TSSLSocket*>(inner_.get()) != nullptr),
      zero_copy_(socket_ != nullptr && !tls_),
      options_(options),
      rbuf_(new uint8_t[std::max<size_t>(options.read_buffer_bytes, 64)]),
      rcap_(std::max<size_t>(options.read_buffer_bytes, 64)) {
  EnsureWriteCapacity(kInitialWriteBuffer);
  knownMessageSize_ = remainingMessageSize_ = 0;
}

FramedTransport::~FramedTransport() { ClosePipe(); }

bool FramedTransport::peek() {
  if (rend_ > rpos_) return true;
  return inner_->peek();
}

void FramedTransport::close() {
  inner_->close();
  ClosePipe();
  rpos_ = rend_ = 0;
  frame_remaining_ = frame_size_ = 0;
  frame_open_ = false;
  ResetWrite();
  held_.clear();
}

// ---------------------------------------------------------------- reading

namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void FramedTransport::StartFrameClock() {
  if (options_.frame_timeout_ms <= 0) return;
  if (recv_timeout_shortened_) RestoreRecvTimeout();
  frame_deadline_ns_ = SteadyNowNs() + options_.frame_timeout_ms * 1000000;
}

void FramedTransport::RestoreRecvTimeout() {
  recv_timeout_shortened_ = false;
  if (socket_ != nullptr) {
    socket_->setRecvTimeout(static_cast<int>(std::min<int64_t>(options_.socket_recv_timeout_ms, 1 << 30)));
  }
}

uint32_t FramedTransport::ReadInnerBeforeDeadline(uint8_t* buf, uint32_t len) {
  const int64_t left_ns = frame_deadline_ns_ - SteadyNowNs();
  const auto late = [&] {
    return TTransportException(
        TTransportException::TIMED_OUT,
        absl::StrCat("a frame of ", frame_size_, " bytes did not arrive whole within its ",
                     options_.frame_timeout_ms, " ms (+ its size at ",
                     options_.frame_min_bytes_per_s, " bytes/s)"));
  };
  if (left_ns <= 0) throw late();
  const int64_t left_ms = (left_ns + 999999) / 1000000;
  if (socket_ != nullptr &&
      (options_.socket_recv_timeout_ms <= 0 || left_ms < options_.socket_recv_timeout_ms)) {
    socket_->setRecvTimeout(static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    recv_timeout_shortened_ = true;
  }
  try {
    return ReadInnerNow(buf, len);
  } catch (const TTransportException& e) {
    if (e.getType() == TTransportException::TIMED_OUT && SteadyNowNs() >= frame_deadline_ns_) {
      throw late();
    }
    throw;
  }
}

uint32_t FramedTransport::ReadInnerNow(uint8_t* buf, uint32_t len) {
  if (!zero_copy_) return inner_->read(buf, len);
  // A plaintext socket is read here rather than by TSocket::read, which
  // reads the time of day around every recv() for its retry policy: on a
  // 4-byte round trip that was a tenth of the client's user time.
  const int fd = socket_->getSocketFD();
  if (fd < 0) throw TTransportException(TTransportException::NOT_OPEN, "socket is not open");
  for (;;) {
    const ssize_t got = Recv(fd, buf, len, 0);
    if (got >= 0) return static_cast<uint32_t>(got);
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      throw TTransportException(TTransportException::TIMED_OUT, "recv timed out");
    }
    if (err == ECONNRESET) return 0;  // as TSocket: the peer is gone, an end of stream
    throw TTransportException(TTransportException::NOT_OPEN,
                              absl::StrCat("recv failed: ", std::strerror(err)));
  }
}

bool FramedTransport::Fill(size_t need) {
  const size_t have = rend_ - rpos_;
  if (have == 0) {
    // Back to the buffer's start: small messages then reuse the same few
    // cache lines rather than walking cold ones through all 64 KiB.
    rpos_ = rend_ = 0;
  } else if (rpos_ + need > rcap_) {
    std::memmove(rbuf_.get(), rbuf_.get() + rpos_, have);
    rpos_ = 0;
    rend_ = have;
  }
  SetWakeup(1);
  while (rend_ - rpos_ < need) {
    uint32_t got = ReadInner(rbuf_.get() + rend_, static_cast<uint32_t>(rcap_ - rend_));
    if (got == 0) return false;
    rend_ += got;
    received_bytes_ += got;
  }
  return true;
}

void FramedTransport::SetWakeup(int bytes) {
  if (bytes == wakeup_bytes_ || socket_ == nullptr) return;
  const int fd = socket_->getSocketFD();
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes));
  wakeup_bytes_ = bytes;
}

bool FramedTransport::ReadFrameHeader() {
  StartFrameClock();
  if (!FillAtLeast(4)) {
    if (rend_ == rpos_) return false;
    throw TTransportException(TTransportException::END_OF_FILE,
                              "connection closed inside a frame header");
  }
  uint32_t be;
  std::memcpy(&be, rbuf_.get() + rpos_, 4);
  rpos_ += 4;
  const int32_t size = static_cast<int32_t>(ntohl(be));
  if (size < 0 || size > options_.max_frame_bytes) {
    throw TTransportException(
        TTransportException::CORRUPTED_DATA,
        absl::StrCat("received a frame of ", size, " bytes; the limit is ", options_.max_frame_bytes));
  }
  frame_size_ = frame_remaining_ = static_cast<uint32_t>(size);
  frame_open_ = true;
  if (frame_deadline_ns_ != 0 && options_.frame_min_bytes_per_s > 0) {
    frame_deadline_ns_ += static_cast<int64_t>(
        static_cast<double>(size) * 1e9 / static_cast<double>(options_.frame_min_bytes_per_s));
  }
  // The peer speaks again, so it has read what we sent before: the memory
  // of our spliced bytes is no longer read by the kernel.
  if (!held_.empty()) held_.clear();
  // Thrift 0.17 counts message bytes per transport and never resets the
  // count on a server connection; here the budget is the current frame.
  knownMessageSize_ = remainingMessageSize_ = size;
  return true;
}

FramedTransport::PeerWait FramedTransport::WaitForPeer() {
  frame_deadline_ns_ = 0;  // between frames: the idle time is not the frame's
  if (recv_timeout_shortened_) RestoreRecvTimeout();
  if (!zero_copy_) return PeerWait::kUnsupported;
  if (rend_ > rpos_) return PeerWait::kReady;
  const int fd = socket_->getSocketFD();
  if (fd < 0) return PeerWait::kClosed;
  rpos_ = rend_ = 0;
  SetWakeup(1);
  for (;;) {
    const ssize_t got = Recv(fd, rbuf_.get(), rcap_, 0);
    if (got > 0) {
      rend_ = static_cast<size_t>(got);
      received_bytes_ += static_cast<uint64_t>(got);
      return PeerWait::kReady;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return PeerWait::kTimedOut;
    return PeerWait::kClosed;
  }
}

uint32_t FramedTransport::ReadSlow(uint8_t* buf, uint32_t len) {
  if (len == 0) return 0;
  while (frame_remaining_ == 0) {
    if (!ReadFrameHeader()) return 0;
  }
  const uint32_t want = std::min(len, frame_remaining_);
  size_t have = rend_ - rpos_;
  if (have == 0) {
    if (want >= rcap_) {
      // Large read: straight from the socket into the caller's memory. The
      // bytes are part of the current frame, so waiting for a megabyte of
      // them at a time cannot stall.
      // (Not over TLS: OpenSSL reads records piecemeal, and measured no
      // better with it.)
      SetWakeup(socket_ != nullptr && !tls_ && options_.large_read_bytes > 0 &&
                        want >= options_.large_read_bytes
                    ? options_.large_read_wakeup_bytes
                    : 1);
      // At most kMaxInnerRead per call: libthrift 0.17's TSocket refuses a
      // read longer than its TConfiguration's message limit (100 MiB).
      uint32_t got = ReadInner(buf, std::min(want, kMaxInnerRead));
      if (got == 0) {
        throw TTransportException(TTransportException::END_OF_FILE,
                                  "connection closed inside a frame");
      }
      received_bytes_ += got;
      frame_remaining_ -= got;
      remainingMessageSize_ = frame_remaining_;
      return got;
    }
    rpos_ = rend_ = 0;
    SetWakeup(1);  // a buffer fill takes whatever has come
    uint32_t got = ReadInner(rbuf_.get(), static_cast<uint32_t>(rcap_));
    if (got == 0) {
      throw TTransportException(TTransportException::END_OF_FILE,
                                "connection closed inside a frame");
    }
    received_bytes_ += got;
    rend_ = got;
    have = got;
  }
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(want, have));
  std::memcpy(buf, rbuf_.get() + rpos_, n);
  rpos_ += n;
  frame_remaining_ -= n;
  remainingMessageSize_ = frame_remaining_;
  return n;
}

uint32_t FramedTransport::ReadAllSlow(uint8_t* buf, uint32_t len) {
  uint32_t have = 0;
  while (have < len) {
    uint32_t got = read(buf + have, len - have);
    if (got == 0) {
      throw TTransportException(TTransportException::END_OF_FILE, "No more data to read.");
    }
    have += got;
  }
  return have;
}

const uint8_t* FramedTransport::borrow(uint8_t* /*buf*/, uint32_t* len) {
  const uint32_t need = *len;
  if (frame_open_ && need > frame_remaining_) {
    // No well-formed message reads past its frame. Refused here, before the
    // protocol sizes a string of `need` bytes (a 12-byte request declaring a
    // 2 GiB method name made it zero-fill 2 GiB).
    throw TTransportException(TTransportException::CORRUPTED_DATA,
                              absl::StrCat("a read of ", need, " bytes in a frame with ",
                                           frame_remaining_, " left"));
  }
  if (frame_remaining_ == 0 || need > rcap_) return nullptr;
  if (!FillAtLeast(need)) return nullptr;
  *len = static_cast<uint32_t>(std::min<size_t>(rend_ - rpos_, frame_remaining_));
  return rbuf_.get() + rpos_;
}

const uint8_t* FramedTransport::PeekFrame(size_t want, size_t* len) {
  if (!frame_open_ && !ReadFrameHeader()) return nullptr;
  if (!FillAtLeast(std::min<size_t>({want, frame_remaining_, rcap_}))) {
    throw TTransportException(TTransportException::END_OF_FILE, "connection closed inside a frame");
  }
  *len = std::min<size_t>(rend_ - rpos_, frame_remaining_);
  return rbuf_.get() + rpos_;
}

void FramedTransport::consume(uint32_t len) {
  if (len > frame_remaining_ || len > rend_ - rpos_) {
    throw TTransportException(TTransportException::BAD_ARGS,
                              "consume() past the borrowed bytes");
  }
  rpos_ += len;
  frame_remaining_ -= len;
  remainingMessageSize_ = frame_remaining_;
}

void FramedTransport::ConsumePastBuffer() const {
  throw TTransportException(TTransportException::BAD_ARGS,
                            "ConsumeFrame() of a frame not wholly buffered");
}

uint32_t FramedTransport::readEnd() {
  while (frame_remaining_ > 0) {
    if (rend_ == rpos_ && !FillAtLeast(1)) {
      throw TTransportException(TTransportException::END_OF_FILE,
                                "connection closed inside a frame");
    }
    const size_t n = std::min<size_t>(rend_ - rpos_, frame_remaining_);
    rpos_ += n;
    frame_remaining_ -= static_cast<uint32_t>(n);
  }
  const uint32_t size = frame_size_;
  frame_size_ = 0;
  frame_open_ = false;
  return size == 0 ? 0 : size + 4;
}

// ---------------------------------------------------------------- writing

void FramedTransport::EnsureWriteCapacity(size_t more) {
  if (wlen_ + more <= wcap_) return;
  size_t cap = std::max<size_t>({wcap_ * 2, wlen_ + more, kInitialWriteBuffer});
  std::unique_ptr<uint8_t[]> grown(new uint8_t[cap]);  // not zero-filled
  if (wbuf_ != nullptr) std::memcpy(grown.get(), wbuf_.get(), wlen_);
  wbuf_ = std::move(grown);
  wcap_ = cap;
}

void FramedTransport::CloseCopySegment() {
  if (wlen_ > copy_start_) {
    segments_.push_back(Segment{nullptr, copy_start_, wlen_ - copy_start_});
    copy_start_ = wlen_;
  }
}

void FramedTransport::ResetWrite() {
  pending_keepers_.clear();
  wlen_ = 4;
  copy_start_ = 0;
  segments_.clear();
  write_total_ = 0;
}

void FramedTransport::WriteSlow(const uint8_t* buf, uint32_t len) {
  if (len == 0) return;
  write_total_ += len;
  if (len >= options_.copy_threshold_bytes) {
    CloseCopySegment();
    segments_.push_back(Segment{buf, 0, len});
    return;
  }
  EnsureWriteCapacity(len);
  std::memcpy(wbuf_.get() + wlen_, buf, len);
  wlen_ += len;
}

void FramedTransport::WriteKept(const uint8_t* buf, uint32_t len,
                                std::shared_ptr<const void> keeper) {
  if (!WouldKeep(len)) {
    write(buf, len);
    return;
  }
  write_total_ += len;
  CloseCopySegment();
  segments_.push_back(Segment{buf, 0, len, /*spliced=*/true});
  pending_keepers_.push_back(std::move(keeper));
}

void FramedTransport::SendVector() {
  const int fd = socket_->getSocketFD();
  if (fd < 0) throw TTransportException(TTransportException::NOT_OPEN, "socket is not open");
  const size_t n = iov_.size();
  size_t begin = 0;
  while (begin < n) {
    size_t end = begin;
    while (end < n && !spliced_[end]) ++end;
    if (end > begin) SendCopied(fd, begin, end, /*more=*/end < n);
    if (end < n) {
      SendSpliced(fd, iov_[end], /*more=*/end + 1 < n);
      ++end;
    }
    begin = end;
  }
}

void FramedTransport::SendCopied(int fd, size_t begin, size_t end, bool more) {
  struct iovec* iov = iov_.data();
  size_t i = begin;
  const int flags = MSG_NOSIGNAL | (more ? MSG_MORE : 0);
  while (i < end) {
    struct msghdr msg;
    std::memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov + i;
    msg.msg_iovlen = std::min<size_t>(end - i, IOV_MAX);
    // One piece (a small message): plain send(), a little cheaper.
    ssize_t sent = end - i == 1 ? ::send(fd, iov[i].iov_base, iov[i].iov_len, flags)
                                : ::sendmsg(fd, &msg, flags);
    if (sent < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      ThrowSendError(err);
    }
    size_t left = static_cast<size_t>(sent);
    while (i < end && left >= iov[i].iov_len) {
      left -= iov[i].iov_len;
      ++i;
    }
    if (left > 0) {
      iov[i].iov_base = static_cast<char*>(iov[i].iov_base) + left;
      iov[i].iov_len -= left;
    }
  }
}

bool FramedTransport::EnsurePipe() {
  if (pipe_[0] >= 0) return true;
  if (pipe2(pipe_, O_CLOEXEC) != 0) {
    pipe_[0] = pipe_[1] = -1;
    return false;
  }
  // Best effort: past the user's pipe quota Linux refuses, and the default
  // size (64 KiB) only costs more system calls.
  (void)fcntl(pipe_[1], F_SETPIPE_SZ, kPipeBytes);
  const int size = fcntl(pipe_[1], F_GETPIPE_SZ);
  pipe_bytes_ = size > 0 ? static_cast<size_t>(size) : 64 << 10;
  return true;
}

void FramedTransport::ClosePipe() {
  for (int& fd : pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void FramedTransport::SendSpliced(int fd, struct iovec piece, bool more) {
  ScopedSigpipeBlock no_sigpipe;
  char* p = static_cast<char*>(piece.iov_base);
  size_t left = piece.iov_len;
  while (left > 0 && EnsurePipe()) {
    struct iovec chunk = {p, std::min(left, pipe_bytes_)};
    const ssize_t queued = vmsplice(pipe_[1], &chunk, 1, 0);
    if (queued < 0 && errno == EINTR) continue;
    if (queued <= 0) break;  // the pipe is empty: the copying path takes the rest
    size_t in_pipe = static_cast<size_t>(queued);
    while (in_pipe > 0) {
      const bool last = !more && in_pipe == left;
      const ssize_t sent = splice(pipe_[0], nullptr, fd, nullptr, in_pipe, last ? 0 : SPLICE_F_MORE);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) {
        const int err = sent < 0 ? errno : EPIPE;
        ClosePipe();  // it still holds bytes that belong to no frame
        ThrowSendError(err);
      }
      in_pipe -= static_cast<size_t>(sent);
      left -= static_cast<size_t>(sent);
      p += sent;
    }
  }
  if (left == 0) return;
  iov_.push_back({p, left});
  SendCopied(fd, iov_.size() - 1, iov_.size(), more);
  iov_.pop_back();
}

void FramedTransport::SendBuffered() {
  const int fd = socket_->getSocketFD();
  const uint8_t* p = wbuf_.get();
  size_t left = wlen_;
  ResetWrite();  // the bytes stay in wbuf_ until the next write
  if (fd < 0) throw TTransportException(TTransportException::NOT_OPEN, "socket is not open");
  while (left > 0) {
    const ssize_t sent = Send(fd, p, left, MSG_NOSIGNAL);
    if (sent < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      ThrowSendError(err);
    }
    p += sent;
    left -= static_cast<size_t>(sent);
  }
}

void FramedTransport::flush() {
  if (write_total_ == 0) {
    inner_->flush();
    return;
  }
  if (write_total_ > static_cast<uint64_t>(options_.max_frame_bytes)) {
    const uint64_t size = write_total_;
    ResetWrite();
    throw TTransportException(
        TTransportException::BAD_ARGS,
        absl::StrCat("cannot send a frame of ", size, " bytes; the limit is ", options_.max_frame_bytes));
  }
  const uint32_t be = htonl(static_cast<uint32_t>(write_total_));
  std::memcpy(wbuf_.get(), &be, 4);
  if (segments_.empty() && zero_copy_) {
    SendBuffered();  // the common small frame: all of it in the write buffer
    ShrinkWriteBuffer();
    return;
  }
  CloseCopySegment();
  iov_.clear();
  spliced_.clear();
  for (const Segment& s : segments_) {
    const uint8_t* p = s.external != nullptr ? s.external : wbuf_.get() + s.offset;
    iov_.push_back({const_cast<uint8_t*>(p), s.length});
    spliced_.push_back(s.spliced);
  }
  // Spliced bytes may be read by the kernel from here on, sent or not.
  for (std::shared_ptr<const void>& k : pending_keepers_) held_.push_back(std::move(k));
  pending_keepers_.clear();
  try {
    if (socket_ != nullptr && !tls_) {
      SendVector();
    } else {
      for (const struct iovec& v : iov_) {
        inner_->write(static_cast<const uint8_t*>(v.iov_base), static_cast<uint32_t>(v.iov_len));
      }
      inner_->flush();
    }
  } catch (...) {
    ResetWrite();
    throw;
  }
  ResetWrite();
  ShrinkWriteBuffer();
}

void FramedTransport::ShrinkWriteBuffer() {
  if (wcap_ > kRetainedWriteBuffer) {
    wbuf_.reset();
    wcap_ = 0;
    EnsureWriteCapacity(kInitialWriteBuffer);
  }
}

}  // namespace sluice
