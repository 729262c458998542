#include "distributed/rpc/recv_buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

#include "runtime/thread_spare.h"

namespace sluice {
namespace {

constexpr size_t kHugePage = 2 << 20;
constexpr size_t kLargeBytes = 1 << 20;  // from here blocks are whole huge pages
constexpr size_t kMidAlign = 64 << 10;   // blocks below kLargeBytes

size_t BlockAlign(size_t bytes) { return bytes >= kLargeBytes ? kHugePage : kMidAlign; }
size_t BlockSize(size_t bytes) {
  const size_t a = BlockAlign(bytes);
  return (bytes + a - 1) / a * a;
}

void UpdateMax(std::atomic<int64_t>& target, int64_t value) {
  int64_t cur = target.load(std::memory_order_relaxed);
  while (value > cur && !target.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

// Blocks this pool does not keep come from internal::AllocateAligned; those
// of kMinPooledBytes and more are then plain aligned_alloc blocks, which the
// pool may keep and std::free later.
static_assert(RecvBufferPool::kMinPooledBytes >= internal::kHandAlignedBytes);
static_assert(RecvBufferPool::kSmallBlockBytes < internal::kHandAlignedBytes);

// Blocks of exactly kSmallBlockBytes, aligned to at least kTensorAlignment:
// one per thread waits for the next small tensor of any pool (they are
// plain malloc memory, so a block may outlive the pool that made it).
struct SmallBlocks {
  static void Free(void* p) { internal::FreeAligned(p, RecvBufferPool::kSmallBlockBytes); }
};

}  // namespace

RecvBufferPool::RecvBufferPool(int64_t max_cached_bytes) : max_cached_bytes_(max_cached_bytes) {}

RecvBufferPool::~RecvBufferPool() {
  absl::MutexLock lock(&mu_);
  for (auto& [size, block] : free_) std::free(block);
}

void* RecvBufferPool::AllocateRaw(size_t alignment, size_t bytes) {
  if (alignment > kHugePage) return nullptr;
  void* p = nullptr;
  size_t size = bytes;
  if (bytes >= kMinPooledBytes && alignment <= BlockAlign(bytes)) {
    size = BlockSize(bytes);
    {
      absl::MutexLock lock(&mu_);
      auto it = free_.find(size);
      if (it != free_.end()) {
        p = it->second;
        free_.erase(it);
        cached_ -= static_cast<int64_t>(size);
        ++reuses_;
      }
    }
    if (p == nullptr) {
      p = std::aligned_alloc(BlockAlign(bytes), size);
      if (p != nullptr && size >= kHugePage) madvise(p, size, MADV_HUGEPAGE);  // a hint
    }
  } else if (bytes <= kSmallBlockBytes) {
    // Every small block has the full small size, so that any can be spare.
    if (alignment <= kTensorAlignment) p = ThreadSpare<SmallBlocks>::Take();
    if (p == nullptr) {
      p = internal::AllocateAligned(std::max(alignment, kTensorAlignment), kSmallBlockBytes);
    }
  } else {
    p = internal::AllocateAligned(alignment, bytes);
  }
  if (p == nullptr) return nullptr;
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(bytes);
  UpdateMax(peak_, now);
  UpdateMax(largest_, static_cast<int64_t>(bytes));
  return p;
}

void RecvBufferPool::DeallocateRaw(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  if (bytes <= kSmallBlockBytes) {
    if (!ThreadSpare<SmallBlocks>::Keep(ptr)) SmallBlocks::Free(ptr);
    return;
  }
  if (bytes < kMinPooledBytes) {
    internal::FreeAligned(ptr, bytes);
    return;
  }
  // A block of a pooled size with the block alignment can be kept: even one
  // that took the unpooled path (asked for a larger power-of-two alignment)
  // was rounded up to that alignment, so it is at least BlockSize long.
  if (bytes >= kMinPooledBytes &&
      reinterpret_cast<uintptr_t>(ptr) % BlockAlign(bytes) == 0) {
    const size_t size = BlockSize(bytes);
    absl::MutexLock lock(&mu_);
    if (cached_ + static_cast<int64_t>(size) <= max_cached_bytes_) {
      free_.emplace(size, ptr);
      cached_ += static_cast<int64_t>(size);
      return;
    }
  }
  std::free(ptr);
}

AllocatorStats RecvBufferPool::GetStats() const {
  AllocatorStats s;
  s.num_allocs = num_allocs_.load();
  s.bytes_in_use = in_use_.load();
  s.peak_bytes_in_use = peak_.load();
  s.largest_alloc_size = largest_.load();
  return s;
}

int64_t RecvBufferPool::cached_bytes() const {
  absl::MutexLock lock(&mu_);
  return cached_;
}

int64_t RecvBufferPool::reuses() const {
  absl::MutexLock lock(&mu_);
  return reuses_;
}

}  // namespace sluice
