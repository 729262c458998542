// StepDeadline: stops a step that runs past RunOptions::timeout_in_ms (a
// while loop that never ends, a Recv whose sender is gone) by aborting the
// step's rendezvous with DeadlineExceeded. Every executor of the step checks
// the rendezvous before each node, so the step ends within one node's run
// time of the deadline, and StepPartitions reports the deadline as its cause.
//
//   LocalRendezvous own;
//   StepDeadline deadline(options.timeout_in_ms, &own);  // 0: no deadline
//   args.rendezvous = &own;
//   RETURN_IF_ERROR(partitions->Run(args));  // destroying `deadline` disarms it
//
// One watcher thread per timed step, none otherwise. Not copyable; the
// rendezvous must outlive it.
#ifndef SLUICE_RUNTIME_STEP_DEADLINE_H_
#define SLUICE_RUNTIME_STEP_DEADLINE_H_

#include <cstdint>
#include <thread>

#include "absl/synchronization/notification.h"
#include "runtime/rendezvous.h"

namespace sluice {

class StepDeadline {
 public:
  StepDeadline(int64_t timeout_ms, Rendezvous* rendezvous);
  ~StepDeadline();
  StepDeadline(const StepDeadline&) = delete;
  StepDeadline& operator=(const StepDeadline&) = delete;

 private:
  absl::Notification finished_;
  std::thread watcher_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_DEADLINE_H_
