// The reply of WorkerService.RecvTensor written from and read into tensor
// memory, byte for byte what Thrift's generated code writes and parses.
//
//   // server, in place of the generated process_RecvTensor:
//   WriteRecvTensorReply(out, seqid, tensor);      // tensor bytes by reference
//   // client, after WorkerServiceClient::send_RecvTensor:
//   ASSIGN_OR_RETURN(Tensor t, ReadRecvTensorReply(in, allocator));
//
// On a FramedTransport the tensor's bytes go from its buffer to the socket
// in one sendmsg() and from the socket into the new tensor's buffer, with no
// copy in between. Any other transport works too (with the usual copies).
//
// Both functions throw Thrift's exceptions for transport and protocol
// failures (the caller drops the connection), and rpc::RpcError when the
// server answered with one. ReadRecvTensorReply returns a Status for a
// well-formed reply whose tensor is invalid (after reading all of it, so
// the connection stays usable). Thread-compatible (one protocol per thread).
#ifndef SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_REPLY_H_
#define SLUICE_DISTRIBUTED_RPC_RECV_TENSOR_REPLY_H_

#include <cstdint>
#include <string>

#include <thrift/protocol/TProtocol.h>

#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

// Writes message begin .. flush of a successful RecvTensor reply. `tensor`
// must stay alive until this returns (it does: the bytes are flushed here).
void WriteRecvTensorReply(apache::thrift::protocol::TProtocol* out, int32_t seqid,
                          const Tensor& tensor);

// Reads one RecvTensor reply; the tensor comes from `allocator` (default
// CPU when null).
absl::StatusOr<Tensor> ReadRecvTensorReply(apache::thrift::protocol::TProtocol* in,
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
