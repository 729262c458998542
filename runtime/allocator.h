// Allocator: aligned host memory with statistics and an optional limit.
//
//   CpuAllocator alloc(/*bytes_limit=*/1 << 30);
//   void* p = alloc.AllocateRaw(64, 4096);   // nullptr past the limit
//   alloc.DeallocateRaw(p, 4096);
//   AllocatorStats s = alloc.GetStats();      // bytes_in_use, peak_bytes_in_use
//
// Thread-safe. Lifetime: a tensor buffer keeps a shared-owned allocator
// (made with std::make_shared, as devices do) alive until the buffer is freed,
// so tensors may outlive the device or session that made them. An allocator
// that is not shared-owned must outlive every tensor allocated from it.
#ifndef SLUICE_RUNTIME_ALLOCATOR_H_
#define SLUICE_RUNTIME_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sluice {

inline constexpr size_t kTensorAlignment = 64;

// Where an allocator's memory lives. Device memory (a GPU's) cannot be read
// or written by the host: only kernels and copies of its device touch it.
enum class MemoryKind { kHost, kDevice };

struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
  int64_t bytes_limit = 0;  // 0: no limit
  // Caching allocators: bytes taken from the system (in use or cached), the
  // largest free block among them, and how many requests were refused.
  int64_t bytes_reserved = 0;
  int64_t largest_free_block = 0;
  int64_t num_ooms = 0;
};

class Allocator : public std::enable_shared_from_this<Allocator> {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // nullptr when the memory cannot be had (limit reached or system out).
  virtual void* AllocateRaw(size_t alignment, size_t bytes) = 0;
  virtual void DeallocateRaw(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats GetStats() const = 0;
  virtual void ResetPeakForTesting() {}
  virtual MemoryKind memory_kind() const { return MemoryKind::kHost; }
  // The platform ordinal of the device owning kDevice memory (GPU k); -1 for
  // host memory.
  virtual int device_ordinal() const { return -1; }
};

class CpuAllocator : public Allocator {
 public:
  explicit CpuAllocator(std::string name = "cpu", int64_t bytes_limit = 0);
  std::string Name() const override { return name_; }
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override;
  void ResetPeakForTesting() override { peak_.store(in_use_.load()); }

 private:
  const std::string name_;
  const int64_t limit_;
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> largest_{0};
};

// The process's allocator for tensors made outside any device (client feeds,
// fetched results, tests). Never destroyed.
Allocator* DefaultCpuAllocator();

namespace internal {

// Host memory aligned to `alignment` (a power of two), for allocators.
// Blocks under kHandAlignedBytes come from malloc with room to align them
// by hand (glibc's aligned_alloc carves every aligned block out of a larger
// chunk and frees the rest: a sixth of a 4-byte RecvTensor's client-side
// time); larger ones from aligned_alloc. FreeAligned must get the same
// `bytes`. nullptr when the system is out of memory.
inline constexpr size_t kHandAlignedBytes = 256 << 10;
void* AllocateAligned(size_t alignment, size_t bytes);
void FreeAligned(void* ptr, size_t bytes);

}  // namespace internal

}  // namespace sluice

#endif  // SLUICE_RUNTIME_ALLOCATOR_H_
