// BfcAllocator: a caching best-fit allocator with coalescing over memory
// taken in large regions from a SubAllocator (cudaMalloc for a GPU,
// cudaHostAlloc for pinned host buffers, plain aligned memory in tests).
// Freed blocks are cached, split on reuse and merged with free neighbours,
// so a training step's steady state makes no system calls.
//
//   auto alloc = std::make_shared<BfcAllocator>(
//       std::make_unique<HostSubAllocator>(), BfcAllocator::Options{
//           .name = "GPU_0_bfc", .memory_limit = 1 << 30});
//   void* p = alloc->AllocateRaw(256, 1000);    // nullptr when it cannot fit
//   alloc->DeallocateRaw(p, 1000);
//   AllocatorStats s = alloc->GetStats();       // in use, peak, reserved, largest free block
//
// Sizes round up to 256 bytes (so every block is 256-byte aligned). Bins by
// size class (powers of two from 256 B); a request takes the smallest free
// block that fits (lowest address on ties), from the smallest bin that can
// hold it, and always splits off the rest (a multiple of 256, so never a
// sliver): a block handed out is exactly the rounded request, and freeing
// merges it back with free neighbours. Regions grow (each at least double the
// last, at most what the limit leaves); when no region can be had the
// allocator frees every unused cached region and tries once more before it
// fails. Block bookkeeping lives outside the regions, so device memory is
// never touched by the host.
//
// Thread-safe (one mutex; on_allocate runs after it is released). The
// allocator must outlive the memory it handed out; regions go back to the
// SubAllocator in the destructor.
#ifndef SLUICE_RUNTIME_BFC_ALLOCATOR_H_
#define SLUICE_RUNTIME_BFC_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "runtime/allocator.h"

namespace sluice {

// Where a BfcAllocator's regions come from.
class SubAllocator {
 public:
  virtual ~SubAllocator() = default;
  // nullptr when the system has no more.
  virtual void* Alloc(size_t bytes) = 0;
  virtual void Free(void* ptr, size_t bytes) = 0;
  virtual MemoryKind memory_kind() const = 0;
};

// Host memory from aligned_alloc: for tests and host-side caching.
class HostSubAllocator : public SubAllocator {
 public:
  void* Alloc(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  MemoryKind memory_kind() const override { return MemoryKind::kHost; }
};

class BfcAllocator : public Allocator {
 public:
  struct Options {
    std::string name = "bfc";
    int64_t memory_limit = 0;           // bytes; 0: no limit
    int64_t initial_region_bytes = 2 << 20;  // first region, grows from there
    int device_ordinal = -1;            // reported by device_ordinal()
    // Called on every block handed out (GPU tests poison fresh memory).
    std::function<void(void* ptr, size_t bytes)> on_allocate;
    // Whether regions may go back to the SubAllocator now; while it says
    // no, none does, not even to make room (an allocation that does not fit
    // fails instead). A GPU's: not while any GPU records a step (cudaFree
    // synchronizes, which a capture in progress forbids). Null: always.
    std::function<bool()> may_release_regions;
  };

  static constexpr size_t kMinBlock = 256;

  BfcAllocator(std::unique_ptr<SubAllocator> sub, Options options);
  ~BfcAllocator() override;
  BfcAllocator(const BfcAllocator&) = delete;
  BfcAllocator& operator=(const BfcAllocator&) = delete;

  std::string Name() const override { return options_.name; }
  // `alignment` up to 256 is honoured; a larger one (or one that is not a
  // power of two) gets nullptr without counting an OOM. 0 bytes gets a valid
  // 256-byte block. nullptr when the memory cannot be had (counts num_ooms).
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  // The block's own size is used; `bytes` is ignored. nullptr is a no-op; a
  // pointer this allocator did not hand out (or already took back) is ignored.
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override;
  void ResetPeakForTesting() override;
  MemoryKind memory_kind() const override { return sub_->memory_kind(); }
  int device_ordinal() const override { return options_.device_ordinal; }

  // Returns the cached regions with no block in use to the SubAllocator
  // (none while Options::may_release_regions says no).
  void ReleaseFreeRegions();
  // Regions, bins and blocks, for an out-of-memory report.
  std::string DebugString() const;

 private:
  struct Block;   // a run of bytes inside a region, free or in use
  struct Region;  // one SubAllocator allocation

  // Orders free blocks by (size, address): the first block not less than a
  // probe of the requested size is the best fit, lowest address on ties.
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };

  // Bins 0..kNumBins-2 hold [256 << i, 256 << (i + 1)); the last holds the rest.
  static constexpr int kNumBins = 40;

  // (the implementation's private helpers and state)
  void* AllocateLocked(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Block* FindFreeLocked(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool GrowLocked(size_t rounded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void* NewRegionLocked(size_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeBlockLocked(Block* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void InsertFree(Block* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveFree(Block* b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns the bytes given back.
  size_t ReleaseFreeRegionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int64_t LargestFreeBlockLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static int BinFor(size_t bytes);

  const std::unique_ptr<SubAllocator> sub_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Region>> regions_ ABSL_GUARDED_BY(mu_);
  // Free blocks per bin, ordered by (size, address).
  std::vector<std::set<Block*, BlockOrder>> bins_ ABSL_GUARDED_BY(mu_);
  // Blocks in use by address.
  std::map<void*, Block*> in_use_ ABSL_GUARDED_BY(mu_);
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
  size_t next_region_bytes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_BFC_ALLOCATOR_H_
