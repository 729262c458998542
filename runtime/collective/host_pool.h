// NewCollectiveHostPool (internal to the collective executor): the caching
// host allocator for ring results and piece copies.
//
//   std::shared_ptr<Allocator> pool = internal::NewCollectiveHostPool(1 << 30);
//   ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(pool.get(), DT_FLOAT, shape));
//
// A BfcAllocator (runtime/bfc_allocator.h) over plain host memory: a result
// of the size of an earlier one reuses its memory instead of faulting in
// fresh pages, which cost more than moving the bytes over loopback (a fresh
// 64 MiB result: ~16k page faults, ~25 ms). Memory is kept until the pool
// goes: at most `memory_limit` bytes, in use or cached. (Regions advised to
// use transparent huge pages measured no better, and worse at 256 MiB.)
//
// Thread-safe. Shared-owned: tensors keep the pool alive.
#ifndef SLUICE_RUNTIME_COLLECTIVE_HOST_POOL_H_
#define SLUICE_RUNTIME_COLLECTIVE_HOST_POOL_H_

#include <cstdint>
#include <memory>

#include "runtime/allocator.h"

namespace sluice {
namespace internal {

std::shared_ptr<Allocator> NewCollectiveHostPool(int64_t memory_limit);

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_HOST_POOL_H_
