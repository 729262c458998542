#include "runtime/collective/host_pool.h"

#include "runtime/bfc_allocator.h"

namespace sluice {
namespace internal {

std::shared_ptr<Allocator> NewCollectiveHostPool(int64_t memory_limit) {
  return std::make_shared<BfcAllocator>(
      std::make_unique<HostSubAllocator>(),
      BfcAllocator::Options{.name = "collective_host", .memory_limit = memory_limit});
}

}  // namespace internal
}  // namespace sluice
