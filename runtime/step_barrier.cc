#include "runtime/step_barrier.h"

#include <utility>

namespace sluice {

StepBarrier* StepBarrier::Create(int parts, ErrorCallback on_first_error, StatusCallback done) {
  if (parts <= 0) {
    done(absl::OkStatus());
    return nullptr;
  }
  return new StepBarrier(parts, std::move(on_first_error), std::move(done));
}

StepBarrier::StepBarrier(int parts, ErrorCallback on_first_error, StatusCallback done)
    : on_first_error_(std::move(on_first_error)), done_(std::move(done)), pending_(parts) {}

StepBarrier::StatusCallback StepBarrier::Get(int part) {
  return [this, part](absl::Status s) { Report(part, s); };
}

bool StepBarrier::IsEcho(const absl::Status& s) {
  return s.code() == absl::StatusCode::kAborted || s.code() == absl::StatusCode::kCancelled;
}

void StepBarrier::Report(int part, const absl::Status& s) {
  bool first_error = false;
  {
    absl::MutexLock lock(&mu_);
    if (!s.ok()) {
      first_error = root_.ok();
      if (root_.ok() || (IsEcho(root_) && !IsEcho(s))) root_ = s;
    }
  }
  // Outside the lock (stopping the others makes them report), and before
  // this part counts as done, so that the barrier outlives the call.
  if (first_error && on_first_error_) on_first_error_(part, s);
  absl::Status root;
  {
    absl::MutexLock lock(&mu_);
    if (--pending_ > 0) return;
    root = root_;
  }
  StatusCallback done = std::move(done_);
  delete this;
  done(root);
}

}  // namespace sluice
