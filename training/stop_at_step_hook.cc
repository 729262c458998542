#include "training/stop_at_step_hook.h"

#include <utility>

#include "training/hook_values.h"
#include "base/status_macros.h"

namespace sluice {

StopAtStepHook::StopAtStepHook(int64_t last_step, std::string global_step_tensor)
    : last_step_(last_step), global_step_(std::move(global_step_tensor)) {}

std::vector<std::string> StopAtStepHook::BeforeRun() { return {global_step_}; }

absl::Status StopAtStepHook::AfterRun(const std::vector<Tensor>& values, RunContext* context) {
  ASSIGN_OR_RETURN(int64_t seen, internal::ScalarInt64(values[0], global_step_));
  if (seen + 1 < last_step_) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t now, internal::ReadScalarInt64(context->session(), global_step_));
  if (now >= last_step_) context->RequestStop();
  return absl::OkStatus();
}

}  // namespace sluice
