// StepReplay: a step recorded once and replayed (a CUDA graph on a GPU)
// while its feed shapes repeat.
//
// The executor launches every kernel of every step from the host; on a GPU a
// small model's step is mostly those launches. A static graph need not pay
// them each time: once a step's feed types and shapes have repeated
// (min_runs_before_capture runs), the next one is recorded
// (Device::BeginCapture) and later steps with the same feed shapes replay
// the recording: the feeds are copied into the buffers it reads, one launch
// queues the whole step, the fetches are copied out, and the device is
// synced (Session::Run returns after the step's device work, as the
// executor's steps do).
//
//   std::unique_ptr<StepReplay> replay = StepReplay::Create(device, executor);
//   bool replayed;
//   if (replay != nullptr) status = replay->Run(args, /*may_record=*/true, &replayed);
//
// What can be recorded: a step of one device that can capture, whose
// stateful ops are variables, feeds, fetches and kernels that replay right
// (OpKernel::ReplaysRight: a GPU random op, whose Philox counter lives in
// device memory and advances in the recording; a collective of one member,
// which only hands its input on; TensorArrays and stacks, which live for
// one step), and whose branches and trip counts are fixed by its feeds'
// shapes (runtime/step_decisions.h). Any other stateful op keeps the step
// out (a host-side counter or a collective's rendezvous would be frozen
// into the recording), and so does a Switch or loop deciding on a value.
// A loop is recorded whole: every iteration's kernels, in one recording
// (a tf.nn.dynamic_rnn's forward and gradient loops and their TensorArrays
// and stacks), replayed with one launch.
// The recording fails (and the signature runs through the executor from then
// on) where a kernel copies device memory to the host. Variables are
// updated in place where the step allows; where an update copies on write (a
// reader still holds the old value), the step is recorded again holding
// every variable, each update's copy then copied back at the end into the
// buffer the variable keeps. Before each replay the device's variables must
// still have the buffers they had after the recording: a restore or an
// Assign from another signature since makes the step run through the
// executor and be recorded again once its shapes repeat; so does a change
// of a process-wide setting that kernels read on the host
// (runtime/capture_epoch.h).
//
// Memory: the blocks the recorded step allocated stay reserved while the
// recording lives (the step's temporaries are not reused within it either:
// a loop recorded whole holds every iteration's). A recording that runs out
// of memory fails, and the step runs through the executor from then on.
// SLUICE_LOG_STEP_CAPTURE=1 in the environment prints why a step is not
// recorded.
//
// Thread-safety: Run serializes the runs of one StepReplay (traced ones too)
// until recording is disabled. While one records, no other step may run on
// the device (the caller passes its StepGate alone, runtime/step_gate.h:
// NeedsExclusiveDevice).
#ifndef SLUICE_RUNTIME_STEP_REPLAY_H_
#define SLUICE_RUNTIME_STEP_REPLAY_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "runtime/device.h"
#include "runtime/executor.h"

namespace sluice {

struct StepReplayOptions {
  // Runs with the same feed shapes through the executor before recording
  // (the first runs warm caches: cuBLAS handles, allocator pools).
  int min_runs_before_capture = 2;
};

class StepReplay {
 public:
  // nullptr when the step cannot be recorded: the device cannot capture,
  // a branch or trip count may change from run to run, or an op is stateful
  // other than a variable, _Arg, _Retval or a kernel that replays right
  // (see above). `device` and
  // `executor` (the step's one partition) must outlive it.
  static std::unique_ptr<StepReplay> Create(Device* device, Executor* executor,
                                            StepReplayOptions options = {});
  ~StepReplay();
  StepReplay(const StepReplay&) = delete;
  StepReplay& operator=(const StepReplay&) = delete;

  // Whether a Run with these feeds would record (so the caller must keep
  // every other step off the device).
  bool NeedsExclusiveDevice(const CallFrame& frame) const;
  // Runs one step with args.call_frame's feeds (host tensors) into its
  // retvals: through the executor, recording (only when `may_record`: the
  // caller has the device to itself), or replaying. *replayed says whether
  // it was a replay. A traced step (args.stats) runs through the executor.
  absl::Status Run(const Executor::Args& args, bool may_record, bool* replayed);

  // Why recording stopped for good ("" while it may still happen).
  std::string disabled_reason() const;

 private:
  struct Recording;
  // Per feed: its type and shape.
  using FeedKey = std::vector<std::pair<DataType, TensorShape>>;
  // A variable of the device and the tensor it held.
  struct VarState {
    Var* var;
    Tensor tensor;
    bool initialized;
  };

  StepReplay(Device* device, Executor* executor, StepReplayOptions options);
  static FeedKey KeyOf(const CallFrame& frame);
  // Whether the frame's feeds have `key`'s types and shapes (no copy: on
  // every replay).
  static bool Matches(const FeedKey& key, const CallFrame& frame);
  std::vector<VarState> DeviceVars() const;
  absl::Status RunLocked(const Executor::Args& args, bool may_record, bool* replayed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records the step and replays it once (first with the variables
  // unheld, then, if an update gave one a new buffer, holding them); on
  // failure puts the variables back, disables recording and runs the step
  // through the executor.
  absl::Status Record(const Executor::Args& args, const FeedKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One recording into rec->work and rec->retvals. With `held` (the
  // variables' tensors, held), ends with KeepVariableBuffers.
  absl::Status RecordOnce(const Executor::Args& args, const std::vector<VarState>* held,
                          Recording* rec);
  // The device's variables with a copy of each value (ResourceExhausted
  // when there is no room for them).
  absl::StatusOr<std::vector<VarState>> BackUpVariables() const;
  // While recording, after the step: a variable the step gave a new buffer
  // (a copy-on-write update: the recording itself holds the old one) gets
  // its value copied back into the old buffer, recorded, and the old buffer
  // back.
  absl::Status KeepVariableBuffers(const std::vector<VarState>& before);
  // Stops recording for good, saying why, and runs the step.
  absl::Status Disable(absl::string_view why, const Executor::Args& args)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps `rec` as the signature's recording and replays it.
  absl::Status Keep(std::unique_ptr<Recording> rec, CallFrame* frame)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Replay(CallFrame* frame) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool VariablesKept() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Device* const device_;
  Executor* const executor_;
  const StepReplayOptions options_;
  mutable absl::Mutex mu_;
  std::string disabled_ ABSL_GUARDED_BY(mu_);
  FeedKey last_key_ ABSL_GUARDED_BY(mu_);
  int repeats_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Recording> recording_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_REPLAY_H_
