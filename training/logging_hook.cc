#include "training/logging_hook.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "training/hook_values.h"
#include "base/status_macros.h"

namespace sluice {

LoggingHook::LoggingHook(std::string global_step_tensor, std::string loss_tensor,
                         int64_t every_steps, std::ostream* out)
    : global_step_(std::move(global_step_tensor)),
      loss_(std::move(loss_tensor)),
      every_steps_(std::max<int64_t>(every_steps, 1)),
      out_(out) {}

std::vector<std::string> LoggingHook::BeforeRun() { return {global_step_, loss_}; }

absl::Status LoggingHook::AfterRun(const std::vector<Tensor>& values, RunContext* context) {
  ASSIGN_OR_RETURN(int64_t step, internal::ScalarInt64(values[0], global_step_));
  ASSIGN_OR_RETURN(double loss, internal::ScalarDouble(values[1], loss_));
  if (last_logged_step_ >= 0 && step < last_logged_step_ + every_steps_) return absl::OkStatus();
  const absl::Time now = absl::Now();
  std::string line = absl::StrFormat("step %d: loss=%.4f", step, loss);
  if (last_logged_step_ >= 0) {
    const double secs = absl::ToDoubleSeconds(now - last_logged_time_);
    if (secs > 0) absl::StrAppendFormat(&line, " (%.1f steps/s)", (step - last_logged_step_) / secs);
  }
  *out_ << line << "\n";
  out_->flush();
  last_logged_step_ = step;
  last_logged_time_ = now;
  return absl::OkStatus();
}

}  // namespace sluice
