#include "runtime/allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace sluice {
namespace {

void UpdateMax(std::atomic<int64_t>& target, int64_t value) {
  int64_t cur = target.load(std::memory_order_relaxed);
  while (value > cur && !target.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

CpuAllocator::CpuAllocator(std::string name, int64_t bytes_limit)
    : name_(std::move(name)), limit_(bytes_limit) {}

void* CpuAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  const int64_t size = static_cast<int64_t>(bytes);
  int64_t now = in_use_.fetch_add(size, std::memory_order_relaxed) + size;
  if (limit_ > 0 && now > limit_) {
    in_use_.fetch_sub(size, std::memory_order_relaxed);
    return nullptr;
  }
  void* p = internal::AllocateAligned(alignment, bytes);
  if (p == nullptr) {
    in_use_.fetch_sub(size, std::memory_order_relaxed);
    return nullptr;
  }
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  UpdateMax(peak_, now);
  UpdateMax(largest_, size);
  return p;
}

void CpuAllocator::DeallocateRaw(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  internal::FreeAligned(ptr, bytes);
  in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

AllocatorStats CpuAllocator::GetStats() const {
  AllocatorStats s;
  s.num_allocs = num_allocs_.load();
  s.bytes_in_use = in_use_.load();
  s.peak_bytes_in_use = peak_.load();
  s.largest_alloc_size = largest_.load();
  s.bytes_limit = limit_;
  return s;
}

namespace internal {

void* AllocateAligned(size_t alignment, size_t bytes) {
  const size_t a = std::max<size_t>(alignment, sizeof(void*));
  if (bytes >= kHandAlignedBytes) {
    // aligned_alloc needs a size that is a multiple of the alignment.
    return std::aligned_alloc(a, (bytes + a - 1) / a * a);
  }
  // The address malloc gave sits just before the block.
  void* raw = std::malloc(bytes + a + sizeof(void*));
  if (raw == nullptr) return nullptr;
  const uintptr_t block = (reinterpret_cast<uintptr_t>(raw) + sizeof(void*) + a - 1) & ~(a - 1);
  reinterpret_cast<void**>(block)[-1] = raw;
  return reinterpret_cast<void*>(block);
}

void FreeAligned(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  std::free(bytes >= kHandAlignedBytes ? ptr : static_cast<void**>(ptr)[-1]);
}

}  // namespace internal

Allocator* DefaultCpuAllocator() {
  static Allocator* const kAllocator = new CpuAllocator("default_cpu");
  return kAllocator;
}

}  // namespace sluice
