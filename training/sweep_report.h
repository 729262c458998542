// SweepReport: how a training program tells a hyperparameter sweep
// (//tools:sweep) how a trial is doing. Each call prints one line to stdout,
//
//   SLUICE_SWEEP {"step": 200, "accuracy": 0.91, "loss": 0.31}
//
// and flushes it, so the sweep driver (which reads the trial's stdout) sees
// it at once and can stop the trial early (successive halving). Outside a
// sweep (no $SLUICE_SWEEP_DIR) it prints nothing: a program's own progress
// lines are for people.
//
//   for (int64_t step = 1; step <= steps; ++step) {
//     ... train ...
//     if (step % 20 == 0) SweepReport(step, {{"loss", loss}, {"accuracy", acc}});
//   }
//
//   std::string logdir = SweepTrialDir().empty() ? "" : SweepTrialDir() + "/train";
//
// Thread-safe: lines from concurrent calls never interleave. Metric names
// are JSON-escaped; non-finite values are written as null; a metric named
// "step" is left out (the step is its own field).
#ifndef SLUICE_TRAINING_SWEEP_REPORT_H_
#define SLUICE_TRAINING_SWEEP_REPORT_H_

#include <cstdint>
#include <map>
#include <string>

namespace sluice {

// The line SweepReport prints, without its trailing newline.
std::string FormatSweepReport(int64_t step, const std::map<std::string, double>& metrics);

// Prints FormatSweepReport(step, metrics) and a newline to stdout, flushed,
// when a sweep runs this process (SweepTrialDir() is set); else nothing.
void SweepReport(int64_t step, const std::map<std::string, double>& metrics);

// The trial's own directory when a sweep runs this process (the sweep sets
// $SLUICE_SWEEP_DIR, and passes it on to every task of a sub-cluster trial),
// else "". Programs put their checkpoints and TensorBoard events under it so
// that parallel trials never share (or restore) each other's files.
std::string SweepTrialDir();

}  // namespace sluice

#endif  // SLUICE_TRAINING_SWEEP_REPORT_H_
