// StepBarrier: the fan-in of a step's concurrent parts (partitions on local
// devices, or one RunGraph call per task). Each part reports once; the first
// failure runs `on_first_error` (to stop the others: abort the rendezvous,
// tell the other tasks), and after the last report `done` gets the step's
// status: OK, or its root cause. TensorFlow's ExecutorBarrier, with the root
// cause chosen as its master does.
//
//   StepBarrier* barrier = StepBarrier::Create(
//       parts.size(), [&](const absl::Status& s) { rendezvous.StartAbort(s); },
//       [&](absl::Status s) { step_status = s; finished.Notify(); });
//   for (Part& p : parts) p.RunAsync(barrier->Get());
//
// The root cause: the first failure that is not Aborted or Cancelled (those
// usually echo another part's failure), else the first failure.
//
// Thread-safe: parts may report from any threads. Ownership: the barrier
// deletes itself after calling `done`; each callback from Get() must be
// called exactly once. With zero parts, `done` runs inside Create.
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

  static StepBarrier* Create(int parts, std::function<void(const absl::Status&)> on_first_error,
                             StatusCallback done);
  StepBarrier(const StepBarrier&) = delete;
  StepBarrier& operator=(const StepBarrier&) = delete;

  // One part's report; call it once per part.
  StatusCallback Get();

  // True for the codes a part reports when it was stopped because of
  // another part's failure.
  static bool IsEcho(const absl::Status& s);

 private:
  StepBarrier(int parts, std::function<void(const absl::Status&)> on_first_error,
              StatusCallback done);
  void Report(const absl::Status& s);

  const std::function<void(const absl::Status&)> on_first_error_;
  StatusCallback done_;
  absl::Mutex mu_;
  int pending_ ABSL_GUARDED_BY(mu_);
  absl::Status root_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_BARRIER_H_
