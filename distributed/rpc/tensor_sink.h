// TensorSink: where the Thrift server's zero-copy CollectivePush path puts
// the tensors that peers push (the worker implements it, delivering them
// into its collective mailbox).
//
//   ThriftServerOptions opts;
//   opts.tensor_sink = worker.get();   // CollectivePush bytes land in tensors
//
// Thread-safe implementations: both methods are called from the server's
// connection threads.
#ifndef SLUICE_DISTRIBUTED_RPC_TENSOR_SINK_H_
#define SLUICE_DISTRIBUTED_RPC_TENSOR_SINK_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/allocator.h"
#include "runtime/tensor.h"

namespace sluice {

class TensorSink {
 public:
  virtual ~TensorSink() = default;
  // Memory for pushed tensors (their bytes are read from the socket straight
  // into it); null: the default CPU allocator.
  virtual Allocator* PushAllocator() = 0;
  // Memory the receiver registered for this push (a tensor whose buffer the
  // bytes may be read straight into when dtype and element count match),
  // taken: asked once per push, before its bytes are read. Uninitialized:
  // none, the bytes go to PushAllocator's memory.
  virtual Tensor LandingFor(const std::string& to_device, const std::string& key) {
    return Tensor();
  }
  // Takes the tensor a peer pushed for member `to_device` under `key`; an
  // error goes back to the pusher. `sender`: the pushing task as its TLS
  // certificate names it ("" on a plaintext connection). Must not block for
  // long.
  virtual absl::Status AcceptCollectivePush(const std::string& to_device, const std::string& key,
                                            Tensor value, int64_t timeout_ms,
                                            const std::string& sender) = 0;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_TENSOR_SINK_H_
