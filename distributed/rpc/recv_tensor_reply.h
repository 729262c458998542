// WorkerService.RecvTensor's call and reply on a transport, written from
// and read into tensor memory, byte for byte what Thrift's generated code
// writes and parses. The common layouts are encoded and parsed by hand
// (recv_tensor_frames.h); anything else a peer may send goes through the
// protocol.
//
//   // client:
//   WriteRecvTensorCall(transport, step_id, key, timeout_ms);   // and flushes
//   ASSIGN_OR_RETURN(Tensor t, ReadRecvTensorReply(transport, &protocol, allocator));
//   // server, in place of the generated process_RecvTensor:
//   WriteRecvTensorReply(transport, seqid, tensor);      // tensor bytes by reference
//
// On a FramedTransport the tensor's bytes go from its buffer to the socket
// in one sendmsg() and from the socket into the new tensor's buffer, with no
// copy in between. Any other transport works too (with the usual copies).
//
// These functions throw Thrift's exceptions for transport and protocol
// failures (the caller drops the connection), and rpc::RpcError when the
// server answered with one. ReadRecvTensorReply returns a Status for a
// well-formed reply whose tensor is invalid (after reading all of it, so
// the connection stays usable). Thread-compatible (one transport per thread).
#ifndef SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_REPLY_H_
#define SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_REPLY_H_

#include <cstdint>
#include <string>

#include <thrift/protocol/TProtocol.h>
#include <thrift/transport/TTransport.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/rpc/framed_transport.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

// Writes a RecvTensor call (seqid 0) as one frame and flushes it.
void WriteRecvTensorCall(FramedTransport& out, int64_t step_id, absl::string_view key,
                         int64_t timeout_ms);

// Writes a successful RecvTensor reply (a dead tensor as is_dead) as one
// frame and flushes it. `tensor` must stay alive until this returns (it
// does: the bytes are flushed here).
void WriteRecvTensorReply(apache::thrift::transport::TTransport& out, int32_t seqid,
                          const Tensor& tensor);
// The same, with no virtual call per piece (the server's usual case).
void WriteRecvTensorReply(FramedTransport& out, int32_t seqid, const Tensor& tensor);

// Reads one RecvTensor reply from `in`, through `protocol` (a binary
// protocol over `in`) when it is not in the common layout. The tensor comes
// from `allocator` (default CPU when null).
absl::StatusOr<Tensor> ReadRecvTensorReply(FramedTransport& in,
                                           apache::thrift::protocol::TProtocol* protocol,
                                           Allocator* allocator);

// The TensorWire struct alone, for other messages that carry a tensor
// (CollectivePush, see collective_push.h). Write: the tensor's bytes are
// referenced until the caller flushes; `strings` holds DT_STRING elements
// encoded and must live as long. Read: the bytes land in a tensor from
// `allocator` (default CPU when null), or straight into `landing` when it
// is given and has the dtype and element count that arrive (the result
// then shares landing's buffer, in the shape that came); a malformed
// tensor is a Status after its bytes were consumed.
void WriteTensorWireStruct(apache::thrift::protocol::TProtocol* out, const Tensor& tensor,
                           std::string* strings);
absl::StatusOr<Tensor> ReadTensorWireStruct(apache::thrift::protocol::TProtocol* in,
                                            Allocator* allocator,
                                            const Tensor* landing = nullptr);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_REPLY_H_
