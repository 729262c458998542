#include "runtime/step_deadline.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace sluice {

StepDeadline::StepDeadline(int64_t timeout_ms, Rendezvous* rendezvous) {
  if (timeout_ms <= 0 || rendezvous == nullptr) return;
  watcher_ = std::thread([this, timeout_ms, rendezvous] {
    if (finished_.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) return;
    rendezvous->StartAbort(absl::DeadlineExceededError(absl::StrCat(
        "the step ran past RunOptions::timeout_in_ms (", timeout_ms,
        " ms) and was stopped; a while loop whose condition never turns false runs until then")));
  });
}

StepDeadline::~StepDeadline() {
  finished_.Notify();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace sluice
