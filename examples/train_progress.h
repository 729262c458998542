// The main job's progress lines and stopping rule, shared by its
// parameter-server and all-reduce programs: after each global step,
//
//   step    200  loss 0.5012  1894 examples/s  input wait 0.4 %
//
// every `log_every` steps, and an evaluation every `eval_every_s` seconds of
// training (evaluation is not training: its time is not counted)
//
//   step    469  test accuracy 0.8581  (31.0 s of training, epoch 1.0)
//
// until the step budget, the time budget or the target accuracy is reached.
//
// Thread-compatible.
#ifndef SLUICE_EXAMPLES_TRAIN_PROGRESS_H_
#define SLUICE_EXAMPLES_TRAIN_PROGRESS_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sluice {

struct TrainProgressOptions {
  int64_t examples_per_step = 64;  // over every worker
  int64_t epoch_examples = 60000;
  int64_t max_steps = 0;           // stop at this global step
  double max_train_s = 0;          // stop after this much training (0: no limit)
  double stop_at_accuracy = 0;     // stop at an evaluation this good (0: never)
  int64_t log_every = 100;
  double eval_every_s = 30;
  // The test metric of the model now, and its name in the lines.
  std::function<absl::StatusOr<double>()> evaluate;
  std::string metric = "test accuracy";
};

class TrainProgress {
 public:
  explicit TrainProgress(TrainProgressOptions options);

  // After global step `global_step`, with this worker's loss and its input
  // pipeline's total wait so far. True when training should stop (the last
  // evaluation was just made).
  absl::StatusOr<bool> AfterStep(int64_t global_step, float loss, double input_wait_s);

  // "final: test accuracy 0.9103 after 236.2 s of training (4.0 epochs, 1876 global steps)"
  void PrintFinal() const;

  double trained_seconds() const { return trained_s_; }
  double accuracy() const { return accuracy_; }  // the last evaluation's metric

 private:
  const TrainProgressOptions o_;
  absl::Time last_time_;
  double trained_s_ = 0, next_eval_s_;
  int64_t last_log_ = 0, evaluated_step_ = 0;
  double log_trained_s_ = 0, log_wait_s_ = 0;
  double accuracy_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_EXAMPLES_TRAIN_PROGRESS_H_
