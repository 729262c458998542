#include "distributed/rpc/recv_tensor_frames.h"

#include <thrift/protocol/TEnum.h>

#include <cstring>

namespace sluice {

namespace {

// Thrift's binary protocol: strict message headers carry the version in the
// high half; field headers are a type byte (TType) and a big-endian i16 id.
constexpr uint32_t kVersion1 = 0x80010000u;

using apache::thrift::protocol::T_BOOL;
using apache::thrift::protocol::T_CALL;
using apache::thrift::protocol::T_I32;
using apache::thrift::protocol::T_I64;
using apache::thrift::protocol::T_LIST;
using apache::thrift::protocol::T_REPLY;
using apache::thrift::protocol::T_STOP;
using apache::thrift::protocol::T_STRING;
using apache::thrift::protocol::T_STRUCT;
namespace field = recv_tensor_field;

constexpr absl::string_view kCallName = "worker:RecvTensor";
constexpr absl::string_view kReplyName = "RecvTensor";

class Writer {
 public:
  explicit Writer(uint8_t* out) : p_(out) {}
  uint8_t* position() const { return p_; }
  void Byte(uint8_t v) { *p_++ = v; }
  void I16(int16_t v) { Put(__builtin_bswap16(static_cast<uint16_t>(v))); }
  void I32(int32_t v) { Put(__builtin_bswap32(static_cast<uint32_t>(v))); }
  void I64(int64_t v) { Put(__builtin_bswap64(static_cast<uint64_t>(v))); }
  void Bytes(absl::string_view s) {
    I32(static_cast<int32_t>(s.size()));
    if (!s.empty()) std::memcpy(p_, s.data(), s.size());  // an empty view's data may be null
    p_ += s.size();
  }
  void Field(uint8_t type, int16_t id) {
    Byte(type);
    I16(id);
  }
  void MessageBegin(uint8_t type, absl::string_view name, int32_t seqid) {
    I32(static_cast<int32_t>(kVersion1 | type));
    Bytes(name);
    I32(seqid);
  }

 private:
  template <typename T>
  void Put(T big_endian) {
    std::memcpy(p_, &big_endian, sizeof(T));
    p_ += sizeof(T);
  }
  uint8_t* p_;
};

// Offsets in a canonical call, in the encoder's order: the message head
// (version, name, seqid), the headers of the args and step_id fields, the
// step id, the key's field header and length, the key; past the key the
// timeout's field header, its value and two stops.
constexpr size_t kCallSeqidAt = 8 + kCallName.size();
constexpr size_t kCallStepIdAt = kCallSeqidAt + 4 + 3 + 3;
constexpr size_t kCallKeyAt = kCallStepIdAt + 8 + 3 + 4;
constexpr size_t kCallTimeoutAt = kCallKeyAt + 3;  // for an empty key
static_assert(RecvTensorCallBytes(0) == kCallTimeoutAt + 8 + 2);

// Offsets in a canonical reply head: the message head, the headers of the
// result's success, the response's tensor and the dtype fields, the dtype,
// the shape's field and list headers, the rank, the dims; past the dims the
// data field's header and its length.
constexpr size_t kReplySeqidAt = 8 + kReplyName.size();
constexpr size_t kReplyDtypeAt = kReplySeqidAt + 4 + 3 + 3 + 3;
constexpr size_t kReplyRankAt = kReplyDtypeAt + 4 + 3 + 1;
constexpr size_t kReplyDimsAt = kReplyRankAt + 4;
constexpr size_t kReplyDataBytesAt = kReplyDimsAt + 3;  // for rank 0
static_assert(RecvTensorReplyHeadBytes(0) == kReplyDataBytesAt + 4);

// In the tail: TensorWire's stop and the is_dead field's header come first.
constexpr size_t kTailDeadAt = 4;

// The bytes of canonical frames with every value zero, as the encoders
// write them (the parsers' runs of constant bytes come from here).
struct CanonicalBytes {
  uint8_t call[RecvTensorCallBytes(0)];
  uint8_t head[RecvTensorReplyHeadBytes(0)];
  uint8_t tail[kRecvTensorReplyTailBytes];
};
CanonicalBytes MakeCanonical();
// Made while the program loads (trivially destructible), so that reading it
// needs no first-use check; nothing parses a frame before main().
const CanonicalBytes kCanonical = MakeCanonical();

// Whether bytes [kBegin, kEnd) of `p` are those of `canonical` (a constant
// size: the compiler compares in a few loads).
template <size_t kBegin, size_t kEnd>
bool Same(const uint8_t* p, const uint8_t* canonical) {
  static_assert(kBegin < kEnd);
  return std::memcmp(p + kBegin, canonical + kBegin, kEnd - kBegin) == 0;
}

int32_t LoadI32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return static_cast<int32_t>(__builtin_bswap32(v));
}

int64_t LoadI64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return static_cast<int64_t>(__builtin_bswap64(v));
}

}  // namespace

void EncodeRecvTensorCall(const RecvTensorCall& call, uint8_t* out) {
  Writer w(out);
  w.MessageBegin(T_CALL, kCallName, call.seqid);
  w.Field(T_STRUCT, field::kArgsRequest);
  w.Field(T_I64, field::kStepId);
  w.I64(call.step_id);
  w.Field(T_STRING, field::kKey);
  w.Bytes(call.key);
  w.Field(T_I64, field::kTimeout);
  w.I64(call.timeout_ms);
  w.Byte(T_STOP);  // RecvTensorRequest
  w.Byte(T_STOP);  // args
}

size_t EncodeRecvTensorReplyHead(int32_t seqid, int32_t dtype, absl::Span<const int64_t> dims,
                                 int32_t data_bytes, uint8_t* out) {
  Writer w(out);
  w.MessageBegin(T_REPLY, kReplyName, seqid);
  w.Field(T_STRUCT, field::kResultSuccess);
  w.Field(T_STRUCT, field::kResponseTensor);
  w.Field(T_I32, field::kWireDtype);
  w.I32(dtype);
  w.Field(T_LIST, field::kWireShape);
  w.Byte(T_I64);
  w.I32(static_cast<int32_t>(dims.size()));
  for (int64_t d : dims) w.I64(d);
  w.Field(T_STRING, field::kWireData);  // its length here, the bytes after the head
  w.I32(data_bytes);
  return static_cast<size_t>(w.position() - out);
}

int64_t RecvTensorReplyHead::dim(int i) const {
  return LoadI64(wire_dims + 8 * static_cast<size_t>(i));
}

void EncodeRecvTensorReplyTail(bool dead, uint8_t* out) {
  Writer w(out);
  w.Byte(T_STOP);  // TensorWire
  w.Field(T_BOOL, field::kResponseIsDead);
  w.Byte(dead ? 1 : 0);
  w.Byte(T_STOP);  // RecvTensorResponse
  w.Byte(T_STOP);  // result
}

namespace {

CanonicalBytes MakeCanonical() {
  CanonicalBytes b;
  EncodeRecvTensorCall(RecvTensorCall{}, b.call);
  EncodeRecvTensorReplyHead(0, 0, {}, 0, b.head);
  EncodeRecvTensorReplyTail(false, b.tail);
  return b;
}

}  // namespace

// The parsers compare runs of a canonical frame's constant bytes, as the
// encoders above write them, and load the values between the runs: a dozen
// compares instead of a bounds check per field.

bool ParseRecvTensorCall(absl::Span<const uint8_t> payload, RecvTensorCall* call) {
  const uint8_t* p = payload.data();
  const uint8_t* c = kCanonical.call;
  if (payload.size() < RecvTensorCallBytes(0) || !Same<0, kCallSeqidAt>(p, c) ||
      !Same<kCallSeqidAt + 4, kCallStepIdAt>(p, c) ||
      !Same<kCallStepIdAt + 8, kCallKeyAt - 4>(p, c)) {
    return false;
  }
  const int32_t key_bytes = LoadI32(p + kCallKeyAt - 4);
  if (key_bytes < 0 || payload.size() != RecvTensorCallBytes(static_cast<size_t>(key_bytes))) {
    return false;
  }
  // Past the key, the canonical offsets hold shifted by its length.
  const uint8_t* shifted = p + key_bytes;
  if (!Same<kCallKeyAt, kCallTimeoutAt>(shifted, c) ||
      !Same<kCallTimeoutAt + 8, RecvTensorCallBytes(0)>(shifted, c)) {
    return false;
  }
  call->seqid = LoadI32(p + kCallSeqidAt);
  call->step_id = LoadI64(p + kCallStepIdAt);
  call->key = absl::string_view(reinterpret_cast<const char*>(p + kCallKeyAt),
                                static_cast<size_t>(key_bytes));
  call->timeout_ms = LoadI64(shifted + kCallTimeoutAt);
  return true;
}

size_t ParseRecvTensorReplyHead(absl::Span<const uint8_t> prefix, RecvTensorReplyHead* head) {
  const uint8_t* p = prefix.data();
  const uint8_t* c = kCanonical.head;
  if (prefix.size() < RecvTensorReplyHeadBytes(0) || !Same<0, kReplySeqidAt>(p, c) ||
      !Same<kReplySeqidAt + 4, kReplyDtypeAt>(p, c) ||
      !Same<kReplyDtypeAt + 4, kReplyRankAt>(p, c)) {
    return 0;
  }
  const int32_t rank = LoadI32(p + kReplyRankAt);
  if (rank < 0 || rank > TensorShape::kMaxRank) return 0;
  const size_t bytes = RecvTensorReplyHeadBytes(rank);
  if (prefix.size() < bytes) return 0;
  const uint8_t* shifted = p + 8 * static_cast<size_t>(rank);  // past the dims
  if (!Same<kReplyDimsAt, kReplyDataBytesAt>(shifted, c)) return 0;
  const int32_t data_bytes = LoadI32(shifted + kReplyDataBytesAt);
  if (data_bytes < 0) return 0;
  head->seqid = LoadI32(p + kReplySeqidAt);
  head->dtype = LoadI32(p + kReplyDtypeAt);
  head->rank = rank;
  head->wire_dims = p + kReplyDimsAt;
  head->data_bytes = data_bytes;
  return bytes;
}

bool ParseRecvTensorReplyTail(absl::Span<const uint8_t> tail, bool* dead) {
  const uint8_t* p = tail.data();
  const uint8_t* c = kCanonical.tail;
  if (tail.size() < kRecvTensorReplyTailBytes || !Same<0, kTailDeadAt>(p, c) ||
      !Same<kTailDeadAt + 1, kRecvTensorReplyTailBytes>(p, c) || p[kTailDeadAt] > 1) {
    return false;
  }
  *dead = p[kTailDeadAt] == 1;
  return true;
}

}  // namespace sluice
