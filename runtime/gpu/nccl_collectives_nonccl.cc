// Built without NCCL (or without CUDA): the GPU backend provides no
// all-reduce, and GPU all-reduces take the executor's CPU ring.
#include "runtime/gpu/nccl_collectives.h"

namespace sluice {

bool NcclAvailable() { return false; }

void NcclLocalAllReduce(const CollectiveParams& params, const std::vector<Device*>& devices,
                        const std::vector<Tensor>& inputs,
                        std::function<void(absl::StatusOr<std::vector<Tensor>>)> done) {
  done(absl::UnimplementedError("NCCL all-reduce: Sluice was built without NCCL"));
}

absl::Status NcclCrossProcessAllReduce(const CollectiveParams& params, const std::string& execution,
                                       Device* device, const Tensor& input,
                                       CollectiveTransport* transport,
                                       std::function<void(absl::StatusOr<Tensor>)> done) {
  return absl::UnimplementedError("NCCL all-reduce: Sluice was built without NCCL");
}

}  // namespace sluice
