// Timing a training step run through Session::Run, as the GPU step
// benchmarks (gpu_mlp_step, gpu_cnn_step, gpu_lstm_step) do: `warmup`
// untimed steps, then `steps` timed ones, each fetching the loss (a float
// scalar, read every step as PyTorch's loss.item()) and saying whether it
// replayed a recorded step (RunMetadata::step_replayed).
//
//   ASSIGN_OR_RETURN(TimedSteps t, TimeTrainingSteps(5, 50, [&](RunMetadata* md) {
//     return session->Run(feeds, {loss}, {train}, {}, md);
//   }));
//   PrintTimedSteps("gpu_mlp_step", t);  // name: X ms, name_loss_after: L,
//                                         // name_replayed_steps: R of S
//
// The first failing step's error is returned. Thread-compatible; header only.
#ifndef SLUICE_BENCH_TRAINING_STEPS_H_
#define SLUICE_BENCH_TRAINING_STEPS_H_

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/bench_util.h"
#include "runtime/session.h"

namespace sluice::bench {

struct TimedSteps {
  std::vector<double> ms;  // per timed step
  float loss = 0;          // after the last step
  int replayed = 0;        // timed steps that were replays
  int steps = 0;
};

using TrainingStep = std::function<absl::StatusOr<std::vector<Tensor>>(RunMetadata*)>;

inline absl::StatusOr<TimedSteps> TimeTrainingSteps(int warmup, int steps,
                                                    const TrainingStep& run) {
  TimedSteps t;
  t.steps = steps;
  absl::Status status;
  auto step = [&] {
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out = run(&md);
    if (!out.ok()) {
      if (status.ok()) status = out.status();
      return;
    }
    t.loss = (*out)[0].scalar<float>();
    t.replayed += md.step_replayed ? 1 : 0;
  };
  for (int i = 0; i < warmup; ++i) step();
  if (!status.ok()) return status;
  t.replayed = 0;
  t.ms = TimeRepeated(steps, step);
  if (!status.ok()) return status;
  return t;
}

// NAME: median ms, NAME_loss_after, and (with `replays`) NAME_replayed_steps.
inline void PrintTimedSteps(const std::string& name, const TimedSteps& t, bool replays = true) {
  std::printf("%s: %.3f ms\n", name.c_str(), Median(t.ms));
  std::printf("%s_loss_after: %.4f\n", name.c_str(), t.loss);
  if (replays) std::printf("%s_replayed_steps: %d of %d\n", name.c_str(), t.replayed, t.steps);
  std::fflush(stdout);
}

}  // namespace sluice::bench

#endif  // SLUICE_BENCH_TRAINING_STEPS_H_
