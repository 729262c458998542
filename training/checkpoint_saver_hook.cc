#include "training/checkpoint_saver_hook.h"

#include <cstdio>
#include <utility>

#include "absl/time/clock.h"
#include "training/hook_values.h"
#include "base/status_macros.h"

namespace sluice {

CheckpointSaverHook::CheckpointSaverHook(Saver* saver, std::string dir,
                                         std::string global_step_tensor,
                                         CheckpointSaverOptions options)
    : saver_(saver),
      dir_(std::move(dir)),
      global_step_(std::move(global_step_tensor)),
      options_(std::move(options)) {}

absl::Status CheckpointSaverHook::AfterCreateSession(Session* session) {
  if (last_saved_time_ == absl::InfinitePast()) last_saved_time_ = absl::Now();
  if (last_saved_step_ < 0) {
    ASSIGN_OR_RETURN(last_saved_step_, internal::ReadScalarInt64(session, global_step_));
  }
  return absl::OkStatus();
}

std::vector<std::string> CheckpointSaverHook::BeforeRun() { return {global_step_}; }

absl::Status CheckpointSaverHook::AfterRun(const std::vector<Tensor>& values,
                                           RunContext* context) {
  ASSIGN_OR_RETURN(last_step_, internal::ScalarInt64(values[0], global_step_));
  const bool by_steps =
      options_.every_steps > 0 && last_step_ + 1 >= last_saved_step_ + options_.every_steps;
  const bool by_time = options_.every_secs > 0 &&
                       absl::Now() - last_saved_time_ >= absl::Seconds(options_.every_secs);
  if (!by_steps && !by_time) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t step, internal::ReadScalarInt64(context->session(), global_step_));
  if (step == last_saved_step_ && !last_prefix_.empty()) return absl::OkStatus();
  if (by_time || step >= last_saved_step_ + options_.every_steps) {
    absl::Status saved = Save(context->session(), step);
    if (!absl::IsResourceExhausted(saved)) return saved;
    // Disk full: train on and try again one interval later.
    std::fprintf(stderr, "checkpoint: could not save step %lld to %s (training goes on): %s\n",
                 static_cast<long long>(step), dir_.c_str(), std::string(saved.message()).c_str());
    last_saved_step_ = step;
    last_saved_time_ = absl::Now();
  }
  return absl::OkStatus();
}

absl::Status CheckpointSaverHook::End(Session* session) {
  ASSIGN_OR_RETURN(int64_t step, internal::ReadScalarInt64(session, global_step_));
  if (step == last_saved_step_ && !last_prefix_.empty()) return absl::OkStatus();
  return Save(session, step);
}

absl::Status CheckpointSaverHook::Save(Session* session, int64_t step) {
  ASSIGN_OR_RETURN(last_prefix_, saver_->Save(session, dir_, step, options_.basename));
  last_saved_step_ = step;
  last_saved_time_ = absl::Now();
  return absl::OkStatus();
}

}  // namespace sluice
