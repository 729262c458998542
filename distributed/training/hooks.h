// The training loop's standard hooks (distributed/training/monitored_session.h).
//
//   StopAtStepHook stop(/*last_step=*/1000, "global_step:0");
//   CheckpointSaverHook ckpt(&saver, "/tmp/train", "global_step:0", {.every_steps = 100});
//   LoggingHook log("global_step:0", "loss:0", /*every_steps=*/50, &std::cout);
//   NanTensorHook nan("loss:0");
//   SummarySaverHook summaries("summaries/merged:0", writer.get(), "global_step:0", 100);
//
// Thread-compatible; the saver, writer and stream are borrowed.
#ifndef SLUICE_DISTRIBUTED_TRAINING_HOOKS_H_
#define SLUICE_DISTRIBUTED_TRAINING_HOOKS_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "distributed/checkpoint/saver.h"
#include "distributed/summary/summary_writer.h"
#include "distributed/training/monitored_session.h"

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
  const std::string& last_saved() const { return last_prefix_; }

 private:
  Saver* const saver_;
  const std::string dir_;
  const std::string global_step_;
  const CheckpointSaverOptions options_;
  int64_t last_saved_step_ = -1;
  int64_t last_step_ = -1;
  absl::Time last_saved_time_;
  std::string last_prefix_;
};

// Progress: "step 100: loss=0.3412 (52.3 steps/s)" every `every_steps`.
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

// Fails the loop (InvalidArgument naming the step) when the loss is NaN or
// infinite; with stop_instead, asks to stop instead.
class NanTensorHook : public SessionRunHook {
 public:
  explicit NanTensorHook(std::string loss_tensor, bool stop_instead = false);
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;

 private:
  const std::string loss_;
  const bool stop_instead_;
};

// Fetches a serialized-Summary string tensor every `every_steps` global
// steps and writes it to an event file for TensorBoard.
class SummarySaverHook : public SessionRunHook {
 public:
  SummarySaverHook(std::string summary_tensor, SummaryWriter* writer,
                   std::string global_step_tensor, int64_t every_steps);
  std::vector<std::string> BeforeRun() override;
  absl::Status AfterRun(const std::vector<Tensor>& values, RunContext* context) override;
  absl::Status End(Session* session) override;

 private:
  const std::string summary_;
  SummaryWriter* const writer_;
  const std::string global_step_;
  const int64_t every_steps_;
  int64_t last_written_step_ = -1;
  bool fetch_summary_ = true;  // decided by BeforeRun for the coming step
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_TRAINING_HOOKS_H_
