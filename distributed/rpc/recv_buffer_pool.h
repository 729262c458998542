// RecvBufferPool: host memory for received tensors that keeps freed large
// blocks for the next tensor of the same size.
//
//   auto pool = std::make_shared<RecvBufferPool>(/*max_cached_bytes=*/512 << 20);
//   ASSIGN_OR_RETURN(Tensor t, stub.RecvTensor(step, key, timeout, pool.get()));
//   // t freed -> its block waits in the pool; the next step's receive of
//   // the same size gets it back.
//
// Why: a fresh 64 MiB buffer costs ~40 ms of page faults (zeroing included)
// while the socket fills it, several times the transfer itself; training
// receives the same parameter shapes every step, and collective chunks
// (about 1 MiB, a few elements more or less) come back every push. Blocks
// of at least 1 MiB are rounded up to 2 MiB, aligned to 2 MiB and advised
// to use transparent huge pages; blocks of 256 KiB to 1 MiB are rounded up
// to 64 KiB (so near sizes share one class) and aligned to 64 KiB; smaller
// ones come from malloc, aligned by hand, and are not kept, except that
// each thread keeps one freed block of kSmallBlockBytes for its next small
// tensor (runtime/thread_spare.h; scalars and small vectors arrive every
// step, and this saves a malloc and a free on each). Alignments above
// 2 MiB are refused (nullptr).
//
// Thread-safe. Must be owned by a std::shared_ptr (tensors keep their
// allocator alive through it, see runtime/allocator.h); cached blocks are
// freed when the last owner goes.
#ifndef SLUICE_DISTRIBUTED_RPC_RECV_BUFFER_POOL_H_
#define SLUICE_DISTRIBUTED_RPC_RECV_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "runtime/allocator.h"

namespace sluice {

class RecvBufferPool : public Allocator {
 public:
  static constexpr size_t kMinPooledBytes = 256 << 10;
  // Tensors of at most this many bytes get a block of exactly this size.
  static constexpr size_t kSmallBlockBytes = 256;

  explicit RecvBufferPool(int64_t max_cached_bytes = 512 << 20);
  ~RecvBufferPool() override;
  RecvBufferPool(const RecvBufferPool&) = delete;
  RecvBufferPool& operator=(const RecvBufferPool&) = delete;

  std::string Name() const override { return "recv_buffer_pool"; }
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override;

  // Bytes held in freed blocks waiting for reuse.
  int64_t cached_bytes() const ABSL_LOCKS_EXCLUDED(mu_);
  // Allocations served from the cache.
  int64_t reuses() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const int64_t max_cached_bytes_;
  mutable absl::Mutex mu_;
  std::multimap<size_t, void*> free_ ABSL_GUARDED_BY(mu_);  // block size -> block
  int64_t cached_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t reuses_ ABSL_GUARDED_BY(mu_) = 0;
  // Statistics, lock-free: small tensors never take the lock.
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_RPC_RECV_BUFFER_POOL_H_
