// StepGate: how the steps of one session (or one worker) and a step that
// records (runtime/step_replay.h) keep out of each other's way. Steps pass
// the gate shared; a step that records passes it alone, and only when no
// step is inside, so nothing else queues work on the device meanwhile.
//
//   gate.EnterShared();   ... run a step ...   gate.ExitShared();
//   if (gate.TryEnterAlone()) { ... record ... gate.ExitAlone(); }
//
// Unlike a reader lock, a shared pass may end on another thread than the
// one that began it (an asynchronous step ends on a device's pool).
// TryEnterAlone never waits: a step inside may be waiting for another one
// (a queue), and recording can wait for a later step. Thread-safe.
#ifndef SLUICE_RUNTIME_STEP_GATE_H_
#define SLUICE_RUNTIME_STEP_GATE_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

class StepGate {
public:
  StepGate() = default;
  StepGate(const StepGate &) = delete;
  StepGate &operator=(const StepGate &) = delete;

  // Waits while a step is inside alone.
  void EnterShared();
  void ExitShared();
  // True (and inside alone) when no step is inside.
  bool TryEnterAlone();
  void ExitAlone();

private:
  absl::Mutex mu_;
  int shared_ ABSL_GUARDED_BY(mu_) = 0;
  bool alone_ ABSL_GUARDED_BY(mu_) = false;
};

} // namespace sluice

#endif // SLUICE_RUNTIME_STEP_GATE_H_
