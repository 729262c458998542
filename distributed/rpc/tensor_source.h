// TensorSource: where the Thrift server's zero-copy RecvTensor path gets the
// tensors it answers with (the worker implements it).
//
// Thread-safe implementations; WaitForTensor is called from the server's
// connection threads and may block up to `timeout_ms`.
#ifndef SLUICE_DISTRIBUTED_RPC_TENSOR_SOURCE_H_
#define SLUICE_DISTRIBUTED_RPC_TENSOR_SOURCE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/tensor.h"

namespace sluice {

class TensorSource {
 public:
  virtual ~TensorSource() = default;
  // Blocks until the tensor under `key` of step `step_id` is sent, the step
  // is aborted, or `timeout_ms` passes (DeadlineExceeded).
  virtual absl::StatusOr<Tensor> WaitForTensor(int64_t step_id, const std::string& key,
                                               int64_t timeout_ms) = 0;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_TENSOR_SOURCE_H_
