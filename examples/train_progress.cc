#include "examples/train_progress.h"

#include <algorithm>
#include <cstdio>

#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace sluice {

TrainProgress::TrainProgress(TrainProgressOptions options)
    : o_(std::move(options)), last_time_(absl::Now()), next_eval_s_(o_.eval_every_s) {}

absl::StatusOr<bool> TrainProgress::AfterStep(int64_t global_step, float loss,
                                              double input_wait_s) {
  const absl::Time now = absl::Now();
  trained_s_ += absl::ToDoubleSeconds(now - last_time_);
  last_time_ = now;
  const int64_t every = std::max<int64_t>(1, o_.log_every);
  if (global_step / every > last_log_ / every) {
    const double dt = trained_s_ - log_trained_s_;
    const double rate = dt > 0 ? (global_step - last_log_) * o_.examples_per_step / dt : 0;
    const double wait = dt > 0 ? 100.0 * (input_wait_s - log_wait_s_) / dt : 0;
    std::printf("step %6lld  loss %.4f  %5.0f examples/s  input wait %.1f %%\n",
                static_cast<long long>(global_step), loss, rate, std::max(0.0, wait));
    std::fflush(stdout);
    last_log_ = global_step;
    log_trained_s_ = trained_s_;
    log_wait_s_ = input_wait_s;
  }
  const bool done = (o_.max_steps > 0 && global_step >= o_.max_steps) ||
                    (o_.max_train_s > 0 && trained_s_ >= o_.max_train_s);
  if (!done && trained_s_ < next_eval_s_) return false;
  ASSIGN_OR_RETURN(accuracy_, o_.evaluate());
  evaluated_step_ = global_step;
  std::printf("step %6lld  %s %.4f  (%.1f s of training, epoch %.1f)\n",
              static_cast<long long>(global_step), o_.metric.c_str(), accuracy_, trained_s_,
              static_cast<double>(global_step * o_.examples_per_step) / o_.epoch_examples);
  std::fflush(stdout);
  next_eval_s_ = trained_s_ + o_.eval_every_s;
  last_time_ = absl::Now();  // evaluation is not training
  if (o_.stop_at_accuracy > 0 && accuracy_ >= o_.stop_at_accuracy) {
    std::printf("reached %s %.4f >= %.2f after %.1f s of training\n", o_.metric.c_str(), accuracy_,
                o_.stop_at_accuracy, trained_s_);
    std::fflush(stdout);
    return true;
  }
  return done;
}

void TrainProgress::PrintFinal() const {
  std::printf("final: %s %.4f after %.1f s of training (%.1f epochs, %lld global steps)\n",
              o_.metric.c_str(), accuracy_, trained_s_,
              static_cast<double>(evaluated_step_ * o_.examples_per_step) / o_.epoch_examples,
              static_cast<long long>(evaluated_step_));
  std::fflush(stdout);
}

}  // namespace sluice
