// LoggingHook: prints training progress every N global steps,
//
//   step 100: loss=0.3412 (52.3 steps/s)
//
// (the first line, with no rate yet, has no parenthesis).
//
//   LoggingHook log("global_step:0", "loss:0", /*every_steps=*/50, &std::cout);
//   opts.hooks = {&log};
//
// Errors: InvalidArgument when the global step is not an int32/int64 scalar
// or the loss not a float/double scalar. Thread-compatible. Ownership: the
// stream is borrowed and must outlive the hook.
#ifndef SLUICE_TRAINING_LOGGING_HOOK_H_
#define SLUICE_TRAINING_LOGGING_HOOK_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "training/session_run_hook.h"

namespace sluice {

// Progress: "step 100: loss=0.3412 (52.3 steps/s)" every `every_steps`
// (values below 1 mean 1).
class LoggingHook : public SessionRunHook {
 public:
  LoggingHook(std::string global_step_tensor, std::string loss_tensor, int64_t every_steps,
              std::ostream* out);
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;

 private:
  const std::string global_step_;
  const std::string loss_;
  const int64_t every_steps_;
  std::ostream* const out_;
  int64_t last_logged_step_ = -1;
  absl::Time last_logged_time_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_LOGGING_HOOK_H_
