// CheckpointSaverHook: saves checkpoints (training/checkpoint/saver.h)
// during training, every N global steps and/or every T seconds, and once
// more when the loop ends. Only the chief should have one.
//
//   CheckpointSaverHook ckpt(saver.get(), "/tmp/train", "global_step:0",
//                            {.every_steps = 100, .every_secs = 0});
//   opts.hooks = {&ckpt};       // ... ms->Close() saves the last step
//
// Steps are counted from the global step seen when the first session is
// created (a restored model continues from its step). When a save is due the
// hook reads the global step again after the step, so checkpoints are named
// after the exact step they hold; End saves unless the last save already
// holds the final step. Old checkpoints go as the Saver's max_to_keep says.
//
// A save during training that finds the disk full (ResourceExhausted) does
// not stop training: one line on stderr names the checkpoint and the error,
// and the next save is tried one interval later. The save at End reports it.
//
// Errors: the Saver's; InvalidArgument when the global step is not an
// int32/int64 scalar. Thread-compatible. Ownership: the saver is borrowed.
#ifndef SLUICE_TRAINING_CHECKPOINT_SAVER_HOOK_H_
#define SLUICE_TRAINING_CHECKPOINT_SAVER_HOOK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "training/checkpoint/saver.h"
#include "training/session_run_hook.h"

namespace sluice {

// Saves a checkpoint every `every_steps` global steps and/or `every_secs`
// seconds (0 disables either), and once more at End. Only the chief should
// have one.
struct CheckpointSaverOptions {
  int64_t every_steps = 0;
  double every_secs = 600;
  std::string basename = "model.ckpt";
};
class CheckpointSaverHook : public SessionRunHook {
 public:
  CheckpointSaverHook(Saver* saver, std::string dir, std::string global_step_tensor,
                      CheckpointSaverOptions options = {});
  absl::Status AfterCreateSession(Session* session) override;
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;
  absl::Status End(Session* session) override;
  // The prefix of the last checkpoint this hook wrote ("" : none yet).
  const std::string& last_saved() const { return last_prefix_; }

 private:
  absl::Status Save(Session* session, int64_t step);

  Saver* const saver_;
  const std::string dir_;
  const std::string global_step_;
  const CheckpointSaverOptions options_;
  int64_t last_saved_step_ = -1;  // or the first step seen, before any save
  int64_t last_step_ = -1;        // the global step fetched with the last step
  absl::Time last_saved_time_ = absl::InfinitePast();
  std::string last_prefix_;
};

}  // namespace sluice

#endif  // SLUICE_TRAINING_CHECKPOINT_SAVER_HOOK_H_
