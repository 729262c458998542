// CaptureArena: the allocator a device hands out while it records a step
// (Device::BeginCapture). A recording replays its kernels on the addresses
// they had when recorded, so no block allocated during the recording may go
// back to the pool while the recording lives: the arena holds every block
// freed through it (during the recording or after) until Release, and frees
// them to the underlying allocator then; after Release it passes frees on.
//
//   auto arena = std::make_shared<CaptureArena>(device_allocator);
//   ... tensors allocated from arena.get() while recording ...
//   arena->Release();   // when the recording is destroyed
//
// Tensors keep the arena alive (it is shared-owned). Thread-safe.
#ifndef SLUICE_RUNTIME_CAPTURE_ARENA_H_
#define SLUICE_RUNTIME_CAPTURE_ARENA_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "runtime/allocator.h"

namespace sluice {

class CaptureArena : public Allocator {
 public:
  // `base` must outlive the arena.
  explicit CaptureArena(Allocator* base) : base_(base) {}

  std::string Name() const override { return base_->Name() + "/capture"; }
  void* AllocateRaw(size_t alignment, size_t bytes) override;
  void DeallocateRaw(void* ptr, size_t bytes) override;
  AllocatorStats GetStats() const override { return base_->GetStats(); }
  MemoryKind memory_kind() const override { return base_->memory_kind(); }
  int device_ordinal() const override { return base_->device_ordinal(); }

  // The allocator whose memory the arena hands out.
  Allocator* base() const { return base_; }
  // Frees the blocks held so far; later frees pass straight on.
  void Release();
  // Blocks freed through the arena and held (tests).
  size_t num_held() const;

 private:
  Allocator* const base_;
  mutable absl::Mutex mu_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::pair<void*, size_t>> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CAPTURE_ARENA_H_
