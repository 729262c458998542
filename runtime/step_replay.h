// StepReplay: a step recorded once per signature (its feed shapes, and the
// values of the feeds that decide its branches and loops) and replayed (a
// CUDA graph on a GPU) whenever that signature comes again.
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
// one step; a resource variable's handle op, reads, assignments and
// updates, whose state is the variables this class tracks), and whose
// branches and trip counts are fixed by its feeds' shapes, or by its feeds'
// shapes and the values of some feeds
// (runtime/step_decisions.h). Any other stateful op keeps the step out (a
// host-side counter or a collective's rendezvous would be frozen into the
// recording), and so does a Switch or loop deciding on a variable's value.
// A loop is recorded whole: every iteration's kernels, in one recording
// (a tf.nn.dynamic_rnn's forward and gradient loops and their TensorArrays
// and stacks), replayed with one launch.
//
// A feed whose value decides (a loop bound, a dynamic_rnn's
// sequence_length, an Assert's operand) or that a kernel reads in host
// memory (a GPU's int32 shape arithmetic: a fed batch size) is part of the
// signature a recording is for, as the shapes are: each value is recorded
// once it has repeated, and replayed whenever it comes again. While
// recording, such a feed stays in host memory, where the host reads it, and what
// the device reads of it is uploaded once and kept by the recording (as is
// every upload a recording reads: no kernel may write its output over it).
// A deciding feed over kMaxDecidingFeedBytes runs the step through the
// executor.
//
// Up to max_recordings signatures stay recorded at once (buckets of
// sequence lengths, a last partial batch); recording another drops the
// least recently replayed, whose signature must then run twice as often
// before it is recorded again (so a cycle of more signatures than that
// settles instead of recording at every step). Runs are counted for the
// last kMaxSignaturesCounted signatures, so values that seldom repeat are
// never recorded; after kMaxRunsWithoutRepeat runs in a row of signatures
// not counted before, while nothing is recorded, recording stops (a keyed
// feed that changes at every step, such as int32 labels a host kernel
// reads, would otherwise keep every run serialized and keyed). A failed
// replay fails its step and stops recording.
// The recording fails (and no step records or replays from then on) where
// a kernel copies device memory to the host. Variables are
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
// of memory while others are kept drops them and records again; one that
// runs out of memory alone fails, and steps run through the executor from
// then on. A step whose updates copy on write (it also fetches what it
// updates) gives the variables new buffers at each run through the
// executor, so its signatures' recordings last only while no other
// signature of it runs through the executor.
// SLUICE_LOG_STEP_CAPTURE=1 in the environment prints why a step is not
// recorded.
//
// Thread-safety: Run serializes the runs of one StepReplay (traced ones too)
// until recording is disabled. While one records, no other step may run on
// the device (the caller passes its StepGate alone, runtime/step_gate.h:
// NeedsExclusiveDevice).
#ifndef SLUICE_RUNTIME_STEP_REPLAY_H_
#define SLUICE_RUNTIME_STEP_REPLAY_H_

#include <list>
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
  // Runs of a signature (feed shapes, deciding values) through the
  // executor before it is recorded (the first runs warm caches: cuBLAS
  // handles, allocator pools).
  int min_runs_before_capture = 2;
  // Recordings kept at once, one per signature (feed shapes and deciding
  // values); the least recently replayed goes first.
  int max_recordings = 4;
};

class StepReplay {
 public:
  // nullptr when the step cannot be recorded: the device cannot capture,
  // a branch or trip count may change between runs of the same feed shapes
  // and deciding feed values, a deciding feed is a string, or an op is stateful
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

  // The most bytes of deciding feeds a recording is keyed on.
  static constexpr size_t kMaxDecidingFeedBytes = 4096;
  // Signatures whose runs through the executor are counted at once (the
  // most recently run).
  static constexpr size_t kMaxSignaturesCounted = 16;
  // Runs in a row, each of a signature not counted before (or with deciding
  // feeds too large to key on), after which recording stops while nothing
  // is recorded.
  static constexpr int kMaxRunsWithoutRepeat = 64;

 private:
  struct Recording;
  // What a recording is for: per feed its type and shape, and the bytes of
  // each deciding feed.
  struct FeedKey {
    std::vector<std::pair<DataType, TensorShape>> shapes;
    std::vector<std::string> values;
    bool operator==(const FeedKey&) const = default;
  };
  // A signature run through the executor, and how often.
  struct Seen {
    FeedKey key;
    int runs = 0;
    int drops = 0;  // of its recording, to make room
  };
  // A variable of the device and the tensor it held.
  struct VarState {
    Var* var;
    Tensor tensor;
    bool initialized;
  };

  StepReplay(Device* device, Executor* executor, StepReplayOptions options,
             std::vector<int> deciding_feeds);
  FeedKey KeyOf(const CallFrame& frame) const;
  // Whether the frame's feeds have `key`'s types, shapes and deciding
  // values (no copy: on every replay).
  bool Matches(const FeedKey& key, const CallFrame& frame) const;
  // Whether the frame's deciding feeds are small enough to key on.
  bool Keyable(const CallFrame& frame) const;
  bool Deciding(size_t feed) const;
  std::vector<VarState> DeviceVars() const;
  absl::Status RunLocked(const Executor::Args& args, bool may_record, bool* replayed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Makes room, records the step (TryRecord; out of memory with other
  // recordings kept, drops them and tries once more) and replays it; on
  // failure disables recording and runs the step through the executor.
  absl::Status Record(const Executor::Args& args, const FeedKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One recording of the step, not yet kept: first with the variables
  // unheld, then, if an update gave one a new buffer, holding them. On
  // failure the variables are as before.
  absl::StatusOr<std::unique_ptr<Recording>> TryRecord(const Executor::Args& args,
                                                       const FeedKey& key)
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
  // back. A fetched value in an old buffer (read before the update) is
  // copied out of it first, into *retvals.
  absl::Status KeepVariableBuffers(const std::vector<VarState>& before,
                                   std::vector<Tensor>* retvals);
  // The recording of the frame's signature, or recordings_.end().
  std::list<std::unique_ptr<Recording>>::iterator FindRecording(const CallFrame& frame)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The count of the frame's signature (made, or moved to the front);
  // *counted_before says whether it was there already.
  Seen& CountOf(const CallFrame& frame, bool* counted_before) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a run whose signature `repeated` (or not); true when recording
  // should stop: kMaxRunsWithoutRepeat runs in a row did not, and nothing is
  // recorded.
  bool NothingRepeats(bool repeated) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs of a signature through the executor before it is recorded:
  // min_runs_before_capture, doubled for each drop of its recording (up to
  // 16 times as many).
  int RunsBeforeRecording(const Seen& seen) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops a kept recording to make room; its signature's count starts over.
  void DropRecording(std::list<std::unique_ptr<Recording>>::iterator rec)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A variable's tensor and state as `v` has them.
  static void PutBack(const VarState& v);
  // Stops recording for good (every signature), saying why, and runs the
  // step.
  absl::Status Disable(absl::string_view why, const Executor::Args& args)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops every recording; nothing records or replays any more.
  void StopRecording(std::string why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps `rec` as its signature's recording (the most recent) and replays
  // it.
  absl::Status Keep(std::unique_ptr<Recording> rec, CallFrame* frame)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Replays `rec` (ReplayOnce); after a failure, StopRecording. `rec` is
  // gone then.
  absl::Status Replay(Recording& rec, CallFrame* frame) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReplayOnce(Recording& rec, CallFrame* frame) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool VariablesKept(const Recording& rec) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Device* const device_;
  Executor* const executor_;
  const StepReplayOptions options_;
  const std::vector<int> deciding_feeds_;  // sorted _Arg indexes
  mutable absl::Mutex mu_;
  std::string disabled_ ABSL_GUARDED_BY(mu_);
  // The most recently replayed first; at most options_.max_recordings.
  std::list<std::unique_ptr<Recording>> recordings_ ABSL_GUARDED_BY(mu_);
  // The most recently run first; at most kMaxSignaturesCounted.
  std::list<Seen> seen_ ABSL_GUARDED_BY(mu_);
  bool logged_unkeyable_ ABSL_GUARDED_BY(mu_) = false;
  int runs_without_repeat_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STEP_REPLAY_H_
