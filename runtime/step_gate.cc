#include "runtime/step_gate.h"

namespace sluice {

void StepGate::EnterShared() {
  absl::MutexLock lock(&mu_);
  auto open = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !alone_; };
  mu_.Await(absl::Condition(&open));
  ++shared_;
}

void StepGate::ExitShared() {
  absl::MutexLock lock(&mu_);
  --shared_;
}

bool StepGate::TryEnterAlone() {
  absl::MutexLock lock(&mu_);
  if (alone_ || shared_ > 0)
    return false;
  alone_ = true;
  return true;
}

void StepGate::ExitAlone() {
  absl::MutexLock lock(&mu_);
  alone_ = false;
}

} // namespace sluice
