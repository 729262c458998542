// FramedTransport: Thrift's framed wire format (a 4-byte big-endian payload
// length, then the payload) without ever holding a whole frame in memory.
//
//   auto socket = std::make_shared<apache::thrift::transport::TSocket>(fd);
//   auto framed = std::make_shared<FramedTransport>(socket);
//   TBinaryProtocolT<FramedTransport> protocol(framed);
//   ... protocol.writeBinary(big); framed->flush();   // big sent from its own memory
//
// Compared with Thrift's TFramedTransport (same bytes on the wire, so either
// end may be the stock class):
//  - reads go through a small buffer (64 KiB); a read of at least the buffer
//    size goes from the socket straight into the caller's memory, so a
//    tensor's bytes land in the tensor, and a multi-megabyte one wakes the
//    reader per megabyte rather than per packet (SO_RCVLOWAT);
//  - writes below `copy_threshold_bytes` are copied into a buffer; larger ones
//    are kept as (pointer, length) and sent by flush() together with the
//    frame header in one sendmsg() (when the inner transport is a plain
//    TSocket; over TLS every byte goes through the TSSLSocket);
//  - frames up to `max_frame_bytes` (default 2 GiB - 1) are accepted, and the
//    message-size bookkeeping of Thrift 0.17 is reset per frame, so a
//    long-lived connection never hits its "MaxMessageSize reached" drop;
//    the socket is read at most 64 MiB at a time (a TSocket of 0.17 refuses
//    longer reads), so frames of any allowed size pass;
//  - bytes written with WriteKept (a tensor's buffer) of at least
//    `zero_copy_bytes` go to a plaintext socket without being copied at all:
//    vmsplice() hands their pages to a pipe and splice() moves them into the
//    socket, so the kernel reads them from the caller's memory as the peer
//    receives them, after flush() has returned (see WriteKept);
//  - a read that would run past the end of its frame is refused
//    (CORRUPTED_DATA) before the caller sizes anything for it: a string a
//    hostile peer declares longer than the frame it sent costs no memory.
//
// Contract of write(): memory passed in a write of >= copy_threshold_bytes
// must stay valid and unchanged until the next flush() returns. Thrift's
// generated code satisfies this: large writes are string/binary fields of
// argument and result structs that live until the message is flushed; the
// protocols' own small temporaries are always copied.
//
// Thread-compatible: one thread uses a transport at a time (as with any
// Thrift transport). Owns its buffers; shares the inner transport.
#ifndef SLUICE_DISTRIBUTED_RPC_FRAMED_TRANSPORT_H_
#define SLUICE_DISTRIBUTED_RPC_FRAMED_TRANSPORT_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <thrift/transport/TSocket.h>
#include <thrift/transport/TTransport.h>
#include <thrift/transport/TVirtualTransport.h>

namespace sluice {

struct FramedTransportOptions {
  size_t read_buffer_bytes = 64 << 10;
  // Writes of at least this many bytes are sent from the caller's memory.
  size_t copy_threshold_bytes = 16 << 10;
  // Frames (either direction) larger than this are refused.
  int64_t max_frame_bytes = 0x7fffffff;
  // While at least `large_read_bytes` of the current frame are read straight
  // into the caller's memory (a tensor), the socket wakes the reader only
  // once `large_read_wakeup_bytes` have arrived (SO_RCVLOWAT) instead of for
  // every packet: a tenth of the wake-ups, +30% on 64 MiB over loopback
  // here. 0: never.
  size_t large_read_bytes = 4 << 20;
  int large_read_wakeup_bytes = 1 << 20;
  // WriteKept bytes from this size on are sent without a copy (plaintext
  // TSocket only; over TLS OpenSSL encrypts them anyway). A sender on
  // loopback spends about a third less CPU per byte. 0: never.
  size_t zero_copy_bytes = 2 << 20;
  // A server's bound on a whole incoming frame, however its bytes trickle
  // in: from the first read of its header, frame_timeout_ms plus its size at
  // frame_min_bytes_per_s (the socket's receive timeout alone bounds each
  // read, not the frame). 0: no such bound. The socket's receive timeout is
  // shortened near the deadline and set back to socket_recv_timeout_ms
  // between frames.
  int64_t frame_timeout_ms = 0;
  int64_t frame_min_bytes_per_s = 1 << 20;
  int64_t socket_recv_timeout_ms = 0;
};

// Final: calls through a FramedTransport& (the hand-written RecvTensor
// path) then need no virtual dispatch.
class FramedTransport final
    : public apache::thrift::transport::TVirtualTransport<FramedTransport> {
 public:
  explicit FramedTransport(std::shared_ptr<apache::thrift::transport::TTransport> inner,
                           FramedTransportOptions options = {});
  ~FramedTransport() override;
  FramedTransport(const FramedTransport&) = delete;
  FramedTransport& operator=(const FramedTransport&) = delete;

  bool isOpen() const override { return inner_->isOpen(); }
  bool peek() override;
  void open() override { inner_->open(); }
  void close() override;
  const std::string getOrigin() const override { return inner_->getOrigin(); }

  // TVirtualTransport's non-virtual implementations. The protocols call
  // these for every field, so the common case (bytes already buffered, room
  // in the write buffer) is inline.
  uint32_t read(uint8_t* buf, uint32_t len) {
    if (len <= rend_ - rpos_ && len <= frame_remaining_) return TakeBuffered(buf, len);
    return ReadSlow(buf, len);
  }
  uint32_t readAll(uint8_t* buf, uint32_t len) {
    if (len <= rend_ - rpos_ && len <= frame_remaining_) return TakeBuffered(buf, len);
    return ReadAllSlow(buf, len);
  }
  void write(const uint8_t* buf, uint32_t len) {
    if (len < options_.copy_threshold_bytes && wlen_ + len <= wcap_) {
      std::memcpy(wbuf_.get() + wlen_, buf, len);
      wlen_ += len;
      write_total_ += len;
      return;
    }
    WriteSlow(buf, len);
  }
  // Room for `len` more bytes of the pending frame, in the transport's own
  // buffer: the caller writes them there before the next write or flush
  // (a hand-written encoder, recv_tensor_frames.h, saves a copy).
  uint8_t* WriteSpace(uint32_t len) {
    if (wlen_ + len > wcap_) EnsureWriteCapacity(len);
    uint8_t* p = wbuf_.get() + wlen_;
    wlen_ += len;
    write_total_ += len;
    return p;
  }
  // write() of bytes that `keeper` keeps alive and unchanged. When the
  // transport sends them without a copy (WouldKeep), the kernel may still
  // read them after flush() returns, so the transport holds `keeper` until
  // the peer's next frame begins (a peer that answers, or asks again, only
  // after reading the whole frame has read these bytes by then) or until the
  // transport is closed or destroyed. A peer that reads a frame after its
  // connection was closed, or pipelines requests, may see the bytes as they
  // are then rather than as they were: the sender must not reuse the memory
  // for other data while such a peer could still read it.
  void WriteKept(const uint8_t* buf, uint32_t len, std::shared_ptr<const void> keeper);
  // True when WriteKept of `len` bytes would send them without a copy.
  bool WouldKeep(size_t len) const {
    return zero_copy_ && options_.zero_copy_bytes > 0 && len >= options_.zero_copy_bytes;
  }
  // Keepers held for bytes the peer may not have read yet (for tests).
  size_t kept_for_testing() const { return held_.size() + pending_keepers_.size(); }

  const uint8_t* borrow(uint8_t* buf, uint32_t* len);
  void consume(uint32_t len);

  // The current frame's bytes in place, for a hand-written parser
  // (recv_tensor_frames.h): opens the next frame when none is open
  // (blocking for its header), then buffers at least min(want, the frame's
  // unread bytes, the read buffer's size) of it. Returns the frame's
  // buffered unread bytes (*len of them, taken with consume()), or null
  // at a clean end of stream before a frame. Throws as read().
  const uint8_t* PeekFrame(size_t want, size_t* len);

  // Between frames, on a plaintext TSocket: blocks in one recv() (a poll()
  // and then a read would be two system calls per request) until the peer
  // sends bytes (buffered: kReady), closes or resets the connection
  // (kClosed), or the socket's receive timeout passes (kTimedOut).
  // kUnsupported over TLS or another inner transport.
  enum class PeerWait { kReady, kClosed, kTimedOut, kUnsupported };
  PeerWait WaitForPeer();

  // Skips what is left of the current frame; returns the frame's size.
  uint32_t readEnd() override;
  // consume() and readEnd() of a frame whose unread bytes are all buffered
  // (frame_remaining() <= buffered_bytes(), as after a whole-frame
  // PeekFrame), inline: a hand-parsed call or reply ends here.
  void ConsumeFrame() {
    if (frame_remaining_ > rend_ - rpos_) ConsumePastBuffer();
    rpos_ += frame_remaining_;
    frame_remaining_ = frame_size_ = 0;
    remainingMessageSize_ = 0;
    frame_open_ = false;
  }
  uint32_t writeEnd() override { return static_cast<uint32_t>(write_total_); }
  // Sends the pending frame (header + buffered and referenced bytes). Throws
  // TTransportException: TIMED_OUT past the socket's send timeout,
  // NOT_OPEN when the peer is gone, BAD_ARGS for a frame over the limit.
  void flush() override;

  const std::shared_ptr<apache::thrift::transport::TTransport>& inner() const { return inner_; }
  // Bytes received from the inner transport so far (framing included).
  uint64_t received_bytes() const { return received_bytes_; }
  // Payload bytes of the current incoming frame not read yet.
  // Bytes read from the socket and not yet consumed.
  size_t buffered_bytes() const { return rend_ - rpos_; }
  uint32_t frame_remaining() const { return frame_remaining_; }

 private:
  struct Segment {
    const uint8_t* external;  // nullptr: bytes at `offset` of the write buffer
    size_t offset;
    size_t length;
    bool spliced = false;  // external bytes sent without a copy (WriteKept)
  };

  uint32_t TakeBuffered(uint8_t* buf, uint32_t len) {
    std::memcpy(buf, rbuf_.get() + rpos_, len);
    rpos_ += len;
    frame_remaining_ -= len;
    remainingMessageSize_ = frame_remaining_;
    return len;
  }
  // One read of the inner transport: up to `len` bytes, 0 at the end of
  // the stream; throws TTransportException (TIMED_OUT past the socket's
  // receive timeout).
  uint32_t ReadInner(uint8_t* buf, uint32_t len) {
    if (frame_deadline_ns_ != 0) return ReadInnerBeforeDeadline(buf, len);
    return ReadInnerNow(buf, len);
  }
  uint32_t ReadInnerNow(uint8_t* buf, uint32_t len);
  // ReadInner under the frame's deadline (FramedTransportOptions).
  uint32_t ReadInnerBeforeDeadline(uint8_t* buf, uint32_t len);
  // Starts the next frame's clock, or sets back the socket's timeout.
  void StartFrameClock();
  void RestoreRecvTimeout();
  uint32_t ReadSlow(uint8_t* buf, uint32_t len);
  uint32_t ReadAllSlow(uint8_t* buf, uint32_t len);
  void WriteSlow(const uint8_t* buf, uint32_t len);
  // Reads the next frame header; false on a clean end of stream before it.
  bool ReadFrameHeader();
  // Makes `need` (<= buffer size) bytes available at rbuf_ + rpos_; false
  // when the stream ends first. Inline when they are there already.
  bool FillAtLeast(size_t need) { return rend_ - rpos_ >= need || Fill(need); }
  bool Fill(size_t need);
  [[noreturn]] void ConsumePastBuffer() const;
  // Sets the socket's SO_RCVLOWAT when it differs from the current value.
  void SetWakeup(int bytes);
  void EnsureWriteCapacity(size_t more);
  void CloseCopySegment();
  void ResetWrite();
  void ShrinkWriteBuffer();  // gives back a write buffer grown past 1 MiB
  void SendVector();  // sends iov_ (spliced_[i]: iov_[i] without a copy)
  // Sends wbuf_[0, wlen_) (a frame with no external segment) on the
  // plaintext socket and resets the write state.
  void SendBuffered();
  // Sends iov_[begin, end) with sendmsg; `more`: bytes follow (MSG_MORE).
  void SendCopied(int fd, size_t begin, size_t end, bool more);
  // Sends one WriteKept segment through the pipe; `more` as above.
  void SendSpliced(int fd, struct iovec piece, bool more);
  bool EnsurePipe();
  void ClosePipe();

  std::shared_ptr<apache::thrift::transport::TTransport> inner_;
  apache::thrift::transport::TSocket* socket_;  // inner_ as a TSocket, or null
  const bool tls_;  // inner_ is a TSSLSocket: never write to the fd directly
  const bool zero_copy_;  // a plaintext TSocket: WriteKept may splice, WaitForPeer recv()s
  const FramedTransportOptions options_;

  std::unique_ptr<uint8_t[]> rbuf_;
  size_t rcap_;
  size_t rpos_ = 0;
  size_t rend_ = 0;
  uint32_t frame_remaining_ = 0;
  uint32_t frame_size_ = 0;
  bool frame_open_ = false;  // a frame header was read and readEnd() not yet called
  uint64_t received_bytes_ = 0;
  int wakeup_bytes_ = 1;  // the socket's SO_RCVLOWAT
  int64_t frame_deadline_ns_ = 0;     // steady clock; 0: none running
  bool recv_timeout_shortened_ = false;

  // wbuf_[0..4) is room for the frame header.
  std::unique_ptr<uint8_t[]> wbuf_;
  size_t wcap_ = 0;
  size_t wlen_ = 4;
  size_t copy_start_ = 0;  // start of the copy segment not yet closed
  std::vector<Segment> segments_;
  std::vector<struct iovec> iov_;  // flush()'s scratch, kept to save allocations
  std::vector<bool> spliced_;      // per iov_ entry
  // Keepers of the pending frame's WriteKept bytes; after its flush, held_
  // until the next incoming frame header (or close).
  std::vector<std::shared_ptr<const void>> pending_keepers_;
  std::vector<std::shared_ptr<const void>> held_;
  int pipe_[2] = {-1, -1};  // WriteKept's pipe, made on first use
  size_t pipe_bytes_ = 0;
  uint64_t write_total_ = 0;  // payload bytes of the pending frame
};

// Wraps each accepted connection of a stock Thrift server in a FramedTransport.
class FramedTransportFactory : public apache::thrift::transport::TTransportFactory {
 public:
  explicit FramedTransportFactory(FramedTransportOptions options = {}) : options_(options) {}
  std::shared_ptr<apache::thrift::transport::TTransport> getTransport(
      std::shared_ptr<apache::thrift::transport::TTransport> trans) override {
    return std::make_shared<FramedTransport>(std::move(trans), options_);
  }

 private:
  FramedTransportOptions options_;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_FRAMED_TRANSPORT_H_
