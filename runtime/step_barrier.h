// StepBarrier: the fan-in of a step's concurrent parts (partitions on local
// devices, or one RunGraph call per task). Each part reports once; the first
// failure runs `on_first_error` with the failed part's index (to stop the
// others: abort the rendezvous, tell the other tasks), and after the last
// report `done` gets the step's
// status: OK, or its root cause. TensorFlow's ExecutorBarrier, with the root
// cause chosen as its master does.
//
//   StepBarrier* barrier = StepBarrier::Create(
//       parts.size(), [&](int, const absl::Status& s) { rendezvous.StartAbort(s); },
//       [&](absl::Status s) { step_status = s; finished.Notify(); });
//   for (int i = 0; i < parts.size(); ++i) parts[i].RunAsync(barrier->Get(i));
//
// The root cause: the first failure that is not Aborted or Cancelled (those
// usually echo another part's failure), else the first failure.
//
// Thread-safe: parts may report from any threads. Ownership: the barrier
// deletes itself after calling `done`; one callback per part from Get(),
// each called exactly once. With zero parts, `done` runs inside Create.
#ifndef SLUICE_RUNTIME_STEP_BARRIER_H_
#define SLUICE_RUNTIME_STEP_BARRIER_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

class StepBarrier {
 public:
  using StatusCallback = std::function<void(absl::Status)>;
  // The index of the part that failed first, and its failure.
  using ErrorCallback = std::function<void(int part, const absl::Status&)>;

  static StepBarrier* Create(int parts, ErrorCallback on_first_error, StatusCallback done);
  StepBarrier(const StepBarrier&) = delete;
  StepBarrier& operator=(const StepBarrier&) = delete;

  // Part `part`'s report (0 <= part < parts); call it once.
  StatusCallback Get(int part);

  // True for the codes a part reports when it was stopped because of
  // another part's failure.
  static bool IsEcho(const absl::Status& s);

 private:
  StepBarrier(int parts, ErrorCallback on_first_error, StatusCallback done);
  void Report(int part, const absl::Status& s);

  const ErrorCallback on_first_error_;
  StatusCallback done_;
  absl::Mutex mu_;
  int pending_ ABSL_GUARDED_BY(mu_);
  absl::Status root_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_BARRIER_H_
