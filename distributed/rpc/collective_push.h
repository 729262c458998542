// WorkerService.CollectivePush written from and read into tensor memory,
// byte for byte what Thrift's generated code writes and parses.
//
//   // client, on a pooled connection (see worker_stub.cc):
//   WriteCollectivePushCall(protocol, to_device, key, tensor, timeout_ms);
//   connection.worker->recv_CollectivePush();   // the generated reply reader
//   // server, in place of the generated process_CollectivePush, after the
//   // message begin was read:
//   CollectivePushRequest req = ReadCollectivePushArgs(in, allocator);
//   WriteCollectivePushReply(out, seqid, sink->AcceptCollectivePush(...));
//
// On a FramedTransport the tensor's bytes go from its buffer to the socket
// in one sendmsg() and from the socket into the receiving tensor's buffer:
// no copy on either side beyond the kernel's. Any other transport works too.
//
// The functions throw Thrift's exceptions for transport and protocol
// failures (the caller drops the connection). A well-formed request whose
// tensor is invalid is read whole and reported in `value`, so the
// connection stays usable. Thread-compatible (one protocol per thread).
#ifndef SLUICE_DISTRIBUTED_RPC_COLLECTIVE_PUSH_H_
#define SLUICE_DISTRIBUTED_RPC_COLLECTIVE_PUSH_H_

#include <cstdint>
#include <functional>
#include <string>

#include <thrift/protocol/TProtocol.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

// Writes a whole "worker:CollectivePush" call (multiplexed name) and
// flushes it; `value` is only read (its bytes by reference until the flush).
void WriteCollectivePushCall(apache::thrift::protocol::TProtocol* out, const std::string& to_device,
                             const std::string& key, const Tensor& value, int64_t timeout_ms);

struct CollectivePushRequest {
  std::string to_device;
  std::string key;
  int64_t timeout_ms = 0;
  absl::StatusOr<Tensor> value;  // InvalidArgument when malformed or absent
};

// Where a push for (to_device, key) may land (see TensorSink::LandingFor);
// called at most once per push, before its bytes are read.
using LandingLookup = std::function<Tensor(const std::string& to_device, const std::string& key)>;

// Reads the call's arguments, the message end and the frame end; the
// tensor comes from `allocator` (default CPU when null), or lands in what
// `landing_for` names (when given, and the push names its device and key
// before its value, as WriteCollectivePushCall does).
CollectivePushRequest ReadCollectivePushArgs(apache::thrift::protocol::TProtocol* in,
                                             Allocator* allocator,
                                             const LandingLookup& landing_for = nullptr);

// Writes and flushes the reply: success, or an RpcError carrying `status`.
void WriteCollectivePushReply(apache::thrift::protocol::TProtocol* out, int32_t seqid,
                              const absl::Status& status);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_COLLECTIVE_PUSH_H_
