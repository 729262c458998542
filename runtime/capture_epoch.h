// The process's capture epoch. A recorded step (runtime/step_replay.h)
// freezes whatever its kernels decided on the host while it was recorded;
// a process-wide setting that kernels read there (the GPU MatMul precision)
// advances the epoch when it changes, and a recording made in an earlier
// epoch is dropped at its next run instead of replayed.
//
//   AdvanceCaptureEpoch();          // after changing such a setting
//   uint64_t e = CaptureEpoch();    // when recording; compare before replaying
//
// Thread-safe.
#ifndef SLUICE_RUNTIME_CAPTURE_EPOCH_H_
#define SLUICE_RUNTIME_CAPTURE_EPOCH_H_

#include <atomic>
#include <cstdint>

namespace sluice {

namespace internal {
inline std::atomic<uint64_t>& CaptureEpochCounter() {
  static std::atomic<uint64_t> epoch{0};
  return epoch;
}
}  // namespace internal

inline uint64_t CaptureEpoch() {
  return internal::CaptureEpochCounter().load(std::memory_order_acquire);
}

inline void AdvanceCaptureEpoch() {
  internal::CaptureEpochCounter().fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CAPTURE_EPOCH_H_
