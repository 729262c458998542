#include "base/mutex_mode.h"

#include <cstdlib>
#include <cstring>

#include "absl/synchronization/mutex.h"

namespace sluice {
namespace {

bool Choose() {
  const char* value = std::getenv("SLUICE_DEADLOCK_DETECTION");
  const bool detect = value != nullptr && std::strcmp(value, "1") == 0;
  // kAbort is Abseil's own default in a build without NDEBUG.
  absl::SetMutexDeadlockDetectionMode(detect ? absl::OnDeadlockCycle::kAbort
                                             : absl::OnDeadlockCycle::kIgnore);
  return detect;
}

// Before main, so before any thread holds a lock.
const bool kDetecting = Choose();

}  // namespace

bool MutexDeadlockDetectionEnabled() { return kDetecting; }

}  // namespace sluice
