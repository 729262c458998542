// StopAtStepHook: asks the training loop (monitored_session.h) to stop once
// the global step reaches a last step.
//
//   StopAtStepHook stop(/*last_step=*/1000, "global_step:0");
//   opts.hooks = {&stop};   // while (!ms->ShouldStop()) ms->Run(...);
//
// The global step fetched with a step may be read before or after the step
// increments it, so when it comes within one of last_step the hook reads it
// again after the step (one extra fetch) and stops exactly at last_step.
// Errors: InvalidArgument when the tensor is not an int32/int64 scalar.
// Thread-compatible. Ownership: holds nothing borrowed.
#ifndef SLUICE_TRAINING_STOP_AT_STEP_HOOK_H_
#define SLUICE_TRAINING_STOP_AT_STEP_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "training/session_run_hook.h"

namespace sluice {

// Asks to stop once the global step reaches `last_step`.
class StopAtStepHook : public SessionRunHook {
 public:
  StopAtStepHook(int64_t last_step, std::string global_step_tensor);
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;

 private:
  const int64_t last_step_;
  const std::string global_step_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_STOP_AT_STEP_HOOK_H_
