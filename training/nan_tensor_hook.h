// NanTensorHook: fails the training loop when the loss becomes NaN or
// infinite, or asks it to stop instead.
//
//   NanTensorHook nan("loss:0");                       // error
//   NanTensorHook nan2("loss:0", /*stop_instead=*/true, "global_step:0");
//   opts.hooks = {&nan};
//
// The error is InvalidArgument naming the tensor, the value and the step:
// the global step when a global step tensor is given, else the number of
// steps this hook has seen ("local step 17"). A loss that is not float or
// double is InvalidArgument too. Every element of a non-scalar loss is
// checked. Thread-compatible. Ownership: holds nothing borrowed.
#ifndef SLUICE_TRAINING_NAN_TENSOR_HOOK_H_
#define SLUICE_TRAINING_NAN_TENSOR_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "training/session_run_hook.h"

namespace sluice {

// Fails the loop (InvalidArgument naming the step) when the loss is NaN or
// infinite; with stop_instead, asks to stop instead.
class NanTensorHook : public SessionRunHook {
 public:
  explicit NanTensorHook(std::string loss_tensor, bool stop_instead = false,
                         std::string global_step_tensor = "");
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;

 private:
  const std::string loss_;
  const bool stop_instead_;
  const std::string global_step_;  // "" : count steps locally
  int64_t local_step_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_NAN_TENSOR_HOOK_H_
