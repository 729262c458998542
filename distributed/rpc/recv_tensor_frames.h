// RecvTensor's call and the head of its reply, encoded and parsed by hand:
// the bytes Thrift's strict binary protocol gives for sluice.thrift's
// WorkerService.RecvTensor (multiplexed as "worker:RecvTensor"), one
// frame's payload each, without the protocol's per-field virtual calls.
//
//   // client
//   RecvTensorCall call{/*seqid=*/0, step_id, key, timeout_ms};
//   std::vector<uint8_t> bytes(RecvTensorCallBytes(key.size()));
//   EncodeRecvTensorCall(call, bytes.data());
//   // server, on a whole frame:
//   RecvTensorCall got;
//   if (ParseRecvTensorCall(frame, &got)) { ... answer got.key ... }
//
// Why by hand: a 4-byte tensor's round trip over loopback is about 4.5 µs of
// kernel time; the generic Thrift path added another 1.4 µs of user code
// spread over ~40 virtual calls, string copies and struct reads per side
// (bench/RESULTS.md, issue 18). The bytes are the same, so a stock Thrift
// client or server at the other end still works.
//
// Parsers take only the canonical layout (fields in id order with the
// IDL's types, as Thrift's generated code writes them) and say false for
// anything else, leaving the caller to parse the generic way: they never
// reject a message the generated code would accept. They read only inside
// the span they are given. Thread-safe (pure functions).
#ifndef SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_FRAMES_H_
#define SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_FRAMES_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/tensor_shape.h"

namespace sluice {

// Field ids of sluice.thrift's structs on RecvTensor's path (the generic
// reader in recv_tensor_reply.cc uses them too).
namespace recv_tensor_field {
inline constexpr int16_t kArgsRequest = 1;  // WorkerService_RecvTensor_args.req
inline constexpr int16_t kStepId = 1;       // RecvTensorRequest
inline constexpr int16_t kKey = 2;
inline constexpr int16_t kTimeout = 3;
inline constexpr int16_t kResultSuccess = 0;  // WorkerService_RecvTensor_result
inline constexpr int16_t kResultError = 1;
inline constexpr int16_t kResponseTensor = 1;  // RecvTensorResponse
inline constexpr int16_t kResponseIsDead = 2;
inline constexpr int16_t kWireDtype = 1;  // TensorWire
inline constexpr int16_t kWireShape = 2;
inline constexpr int16_t kWireData = 3;
}  // namespace recv_tensor_field

// ------------------------------------------------------------------ call

struct RecvTensorCall {
  int32_t seqid = 0;
  int64_t step_id = 0;
  absl::string_view key;  // ParseRecvTensorCall: points into the frame
  int64_t timeout_ms = 0;
};

// The call's payload size for a key of `key_bytes`.
constexpr size_t RecvTensorCallBytes(size_t key_bytes) { return 63 + key_bytes; }

// Writes exactly RecvTensorCallBytes(call.key.size()) bytes at `out`.
// The key must be shorter than 2 GiB.
void EncodeRecvTensorCall(const RecvTensorCall& call, uint8_t* out);

// True when `payload` is exactly one canonical RecvTensor call (nothing
// before or after it); then `call` holds its fields.
bool ParseRecvTensorCall(absl::Span<const uint8_t> payload, RecvTensorCall* call);

// ------------------------------------------------------------------ reply

// A successful reply is: head, `data_bytes` of tensor data, tail, as the
// generated processor writes RecvTensorResponse: the tensor field first
// (for a dead tensor an empty one: dtype 0, rank 0, no data), then is_dead.
struct RecvTensorReplyHead {
  int32_t seqid = 0;
  int32_t dtype = 0;  // TensorFlow's DataType value, unchecked
  int rank = 0;
  int32_t data_bytes = 0;
  // Parsed heads: the `rank` dimensions as they lie in the frame (dim()).
  const uint8_t* wire_dims = nullptr;
  int64_t dim(int i) const;  // unchecked (may be < 0)
};

// The most bytes a head can take (a tensor of the largest rank).
inline constexpr size_t kMaxRecvTensorReplyHeadBytes = 50 + 8 * TensorShape::kMaxRank;
constexpr size_t RecvTensorReplyHeadBytes(int rank) { return 50 + 8 * static_cast<size_t>(rank); }
// The tail: the end of TensorWire, the is_dead field, the ends of
// RecvTensorResponse and of the result.
inline constexpr size_t kRecvTensorReplyTailBytes = 7;

// Writes RecvTensorReplyHeadBytes(dims.size()) bytes at `out` (dims: at
// most TensorShape::kMaxRank); returns that count.
size_t EncodeRecvTensorReplyHead(int32_t seqid, int32_t dtype, absl::Span<const int64_t> dims,
                                 int32_t data_bytes, uint8_t* out);
// Writes the kRecvTensorReplyTailBytes of the tail.
void EncodeRecvTensorReplyTail(bool dead, uint8_t* out);

// When `prefix` (the start of a reply frame) begins with a canonical head,
// fills `head` and returns the head's byte count; 0 otherwise (an error or
// exception reply, another layout, or a prefix that ends inside the head).
size_t ParseRecvTensorReplyHead(absl::Span<const uint8_t> prefix, RecvTensorReplyHead* head);
// True when `tail` starts with a canonical tail; then `dead` is its is_dead.
bool ParseRecvTensorReplyTail(absl::Span<const uint8_t> tail, bool* dead);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_FRAMES_H_
