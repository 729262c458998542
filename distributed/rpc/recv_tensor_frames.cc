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
    std::memcpy(p_, s.data(), s.size());
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

// Reads within its span; every read after the first failed one fails too.
class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> in) : p_(in.data()), end_(in.data() + in.size()) {}
  bool ok() const { return ok_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* position() const { return p_; }

  uint8_t Byte() { return Get<uint8_t>(); }
  int32_t I32() { return static_cast<int32_t>(__builtin_bswap32(Get<uint32_t>())); }
  int64_t I64() { return static_cast<int64_t>(__builtin_bswap64(Get<uint64_t>())); }
  void FieldHeader(uint8_t* type, int16_t* id) {
    *type = Byte();
    *id = static_cast<int16_t>(__builtin_bswap16(Get<uint16_t>()));
  }
  // A field header of exactly this type and id.
  bool Field(uint8_t type, int16_t id) {
    uint8_t t;
    int16_t i;
    FieldHeader(&t, &i);
    return ok_ && t == type && i == id;
  }
  bool Stop() { return Byte() == T_STOP && ok_; }
  bool Skip(size_t n) {
    if (!ok_ || left() < n) return ok_ = false;
    p_ += n;
    return true;
  }
  // A length-prefixed string; false (and nothing read) past the span.
  bool String(absl::string_view* s) {
    const int32_t len = I32();
    if (!ok_ || len < 0 || static_cast<size_t>(len) > left()) return ok_ = false;
    *s = absl::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(len));
    p_ += len;
    return true;
  }
  bool MessageBegin(uint8_t type, absl::string_view name, int32_t* seqid) {
    if (static_cast<uint32_t>(I32()) != (kVersion1 | type)) return false;
    absl::string_view got;
    if (!String(&got) || got != name) return false;
    *seqid = I32();
    return ok_;
  }

 private:
  // The next sizeof(T) bytes as they lie (big-endian); 0 past the span.
  template <typename T>
  T Get() {
    if (!ok_ || left() < sizeof(T)) {
      ok_ = false;
      return 0;
    }
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  const uint8_t* p_;
  const uint8_t* const end_;
  bool ok_ = true;
};

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

bool ParseRecvTensorCall(absl::Span<const uint8_t> payload, RecvTensorCall* call) {
  Reader r(payload);
  if (!r.MessageBegin(T_CALL, kCallName, &call->seqid) || !r.Field(T_STRUCT, field::kArgsRequest)) {
    return false;
  }
  if (!r.Field(T_I64, field::kStepId)) return false;
  call->step_id = r.I64();
  if (!r.Field(T_STRING, field::kKey) || !r.String(&call->key)) return false;
  if (!r.Field(T_I64, field::kTimeout)) return false;
  call->timeout_ms = r.I64();
  return r.Stop() && r.Stop() && r.left() == 0;
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
  uint64_t v;
  std::memcpy(&v, wire_dims + 8 * static_cast<size_t>(i), 8);
  return static_cast<int64_t>(__builtin_bswap64(v));
}

void EncodeRecvTensorReplyTail(bool dead, uint8_t* out) {
  Writer w(out);
  w.Byte(T_STOP);  // TensorWire
  w.Field(T_BOOL, field::kResponseIsDead);
  w.Byte(dead ? 1 : 0);
  w.Byte(T_STOP);  // RecvTensorResponse
  w.Byte(T_STOP);  // result
}

size_t ParseRecvTensorReplyHead(absl::Span<const uint8_t> prefix, RecvTensorReplyHead* head) {
  Reader r(prefix);
  if (!r.MessageBegin(T_REPLY, kReplyName, &head->seqid) ||
      !r.Field(T_STRUCT, field::kResultSuccess) || !r.Field(T_STRUCT, field::kResponseTensor) ||
      !r.Field(T_I32, field::kWireDtype)) {
    return 0;
  }
  head->dtype = r.I32();
  if (!r.Field(T_LIST, field::kWireShape) || r.Byte() != T_I64) return 0;
  const int32_t rank = r.I32();
  if (!r.ok() || rank < 0 || rank > TensorShape::kMaxRank) return 0;
  head->rank = rank;
  head->wire_dims = r.position();
  if (!r.Skip(8 * static_cast<size_t>(rank)) || !r.Field(T_STRING, field::kWireData)) return 0;
  head->data_bytes = r.I32();
  if (!r.ok() || head->data_bytes < 0) return 0;
  return static_cast<size_t>(r.position() - prefix.data());
}

bool ParseRecvTensorReplyTail(absl::Span<const uint8_t> tail, bool* dead) {
  Reader r(tail);
  if (!r.Stop() || !r.Field(T_BOOL, field::kResponseIsDead)) return false;
  const uint8_t value = r.Byte();
  if (!r.ok() || value > 1) return false;
  *dead = value == 1;
  return r.Stop() && r.Stop();
}

}  // namespace sluice
