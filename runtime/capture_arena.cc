#include "runtime/capture_arena.h"

namespace sluice {

void* CaptureArena::AllocateRaw(size_t alignment, size_t bytes) {
  return base_->AllocateRaw(alignment, bytes);
}

void CaptureArena::DeallocateRaw(void* ptr, size_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    if (!released_) {
      held_.emplace_back(ptr, bytes);
      return;
    }
  }
  base_->DeallocateRaw(ptr, bytes);
}

void CaptureArena::Release() {
  std::vector<std::pair<void*, size_t>> held;
  {
    absl::MutexLock lock(&mu_);
    released_ = true;
    held.swap(held_);
  }
  for (const auto& [ptr, bytes] : held) base_->DeallocateRaw(ptr, bytes);
}

size_t CaptureArena::num_held() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

}  // namespace sluice
