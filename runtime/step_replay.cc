#include "runtime/step_replay.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/capture_epoch.h"
#include "runtime/frame_ops.h"
#include "runtime/step_decisions.h"

namespace sluice {

// What one recording reads and writes besides the variables.
struct StepReplay::Recording {
  FeedKey key;
  uint64_t epoch = 0;  // CaptureEpoch() when recorded
  std::unique_ptr<CapturedWork> work;
  std::vector<Tensor> feeds;    // device buffers the recording reads
  std::vector<Tensor> retvals;  // what the recording's _Retvals got
  // Each variable's buffer after the recording (nullptr: none).
  std::vector<std::pair<Var*, const void*>> buffers;
};

namespace {

// Ops whose state would be frozen into a recording, unless their kernel
// says it replays right. (Control flow is checked as a whole:
// CheckStepDecisionsFixed.)
bool BlocksRecording(const Node& n, const OpKernel* kernel) {
  const OpDef& def = n.op_def();
  if (!def.is_stateful || def.is_variable || n.op() == kArgOp || n.op() == kRetvalOp) {
    return false;
  }
  return kernel == nullptr || !kernel->ReplaysRight();
}

bool LogCapture() {
  static const bool log = std::getenv("SLUICE_LOG_STEP_CAPTURE") != nullptr;
  return log;
}

}  // namespace

std::unique_ptr<StepReplay> StepReplay::Create(Device* device, Executor* executor,
                                               StepReplayOptions options) {
  if (device == nullptr || executor == nullptr || !device->can_capture()) return nullptr;
  for (const Node* n : executor->graph().nodes()) {
    if (BlocksRecording(*n, executor->KernelOf(*n))) {
      if (LogCapture()) {
        std::fprintf(stderr, "sluice: step capture on %s: not recorded: %s is stateful\n",
                     device->name().c_str(), n->DebugName().c_str());
      }
      return nullptr;
    }
  }
  if (absl::Status fixed = CheckStepDecisionsFixed(executor->graph()); !fixed.ok()) {
    if (LogCapture()) {
      std::fprintf(stderr, "sluice: step capture on %s: not recorded: %s\n",
                   device->name().c_str(), std::string(fixed.message()).c_str());
    }
    return nullptr;
  }
  return std::unique_ptr<StepReplay>(new StepReplay(device, executor, options));
}

StepReplay::StepReplay(Device* device, Executor* executor, StepReplayOptions options)
    : device_(device), executor_(executor), options_(options) {}

StepReplay::~StepReplay() = default;

std::string StepReplay::disabled_reason() const {
  absl::MutexLock lock(&mu_);
  return disabled_;
}

StepReplay::FeedKey StepReplay::KeyOf(const CallFrame& frame) {
  FeedKey key;
  key.reserve(frame.args.size());
  for (const Tensor& t : frame.args) key.emplace_back(t.dtype(), t.shape());
  return key;
}

bool StepReplay::Matches(const FeedKey& key, const CallFrame& frame) {
  if (key.size() != frame.args.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i].first != frame.args[i].dtype() || key[i].second != frame.args[i].shape()) {
      return false;
    }
  }
  return true;
}

std::vector<StepReplay::VarState> StepReplay::DeviceVars() const {
  std::vector<VarState> out;
  for (Var* v : device_->resource_manager()->ListVars()) {
    absl::MutexLock lock(&v->mu);
    out.push_back({v, v->tensor, v->initialized});
  }
  return out;
}

bool StepReplay::NeedsExclusiveDevice(const CallFrame& frame) const {
  absl::MutexLock lock(&mu_);
  if (!disabled_.empty()) return false;
  if (recording_ != nullptr && Matches(recording_->key, frame)) return false;
  return Matches(last_key_, frame) && repeats_ >= options_.min_runs_before_capture;
}

absl::Status StepReplay::Run(const Executor::Args& args, bool may_record, bool* replayed) {
  *replayed = false;
  {
    absl::MutexLock lock(&mu_);
    if (disabled_.empty()) {
      // A traced step runs through the executor, but not beside a replay: a
      // kernel whose state advances on the device (a random op's counter)
      // must not have a replay's work fall between its own launches.
      if (args.stats != nullptr) return executor_->Run(args);
      return RunLocked(args, may_record, replayed);
    }
  }
  return executor_->Run(args);  // nothing records or replays any more
}

absl::Status StepReplay::RunLocked(const Executor::Args& args, bool may_record,
                                   bool* replayed) {
  const CallFrame& frame = *args.call_frame;
  if (recording_ != nullptr && recording_->epoch != CaptureEpoch()) {
    recording_.reset();  // a setting its kernels read has changed
    repeats_ = 0;
  }
  if (recording_ != nullptr && Matches(recording_->key, frame)) {
    if (VariablesKept()) {
      *replayed = true;
      return Replay(args.call_frame);
    }
    recording_.reset();  // a variable has a new buffer: record again later
    repeats_ = 0;
  }
  if (!Matches(last_key_, frame)) {
    last_key_ = KeyOf(frame);
    repeats_ = 0;
  }
  if (repeats_ >= options_.min_runs_before_capture) {
    if (!may_record) return executor_->Run(args);
    absl::Status s = Record(args, last_key_);
    *replayed = s.ok() && recording_ != nullptr;
    return s;
  }
  // With mu_ held: the steps of one signature run one at a time until it is
  // recorded or recording is disabled.
  absl::Status s = executor_->Run(args);
  if (s.ok()) ++repeats_;
  return s;
}

absl::Status StepReplay::Record(const Executor::Args& args, const FeedKey& key) {
  auto rec = std::make_unique<Recording>();
  rec->key = key;
  rec->epoch = CaptureEpoch();
  for (const Tensor& t : args.call_frame->args) {
    if (t.dtype() == DT_STRING) return Disable("a string feed cannot be recorded", args);
    absl::StatusOr<Tensor> on_device = device_->CopyFromHost(t);
    if (!on_device.ok()) return Disable(on_device.status().message(), args);
    rec->feeds.push_back(*std::move(on_device));
  }
  // First with the variables unheld, so that updates stay in place; their
  // values are backed up (on the device) in case the recording fails.
  absl::StatusOr<std::vector<VarState>> backups = BackUpVariables();
  if (backups.ok()) {
    std::vector<std::pair<Var*, const void*>> buffers;
    for (const VarState& v : *backups) {
      absl::MutexLock lock(&v.var->mu);
      buffers.emplace_back(v.var, v.var->tensor.raw_data());
    }
    absl::Status s = RecordOnce(args, nullptr, rec.get());
    bool moved = false;
    for (size_t i = 0; i < buffers.size(); ++i) {
      absl::MutexLock lock(&buffers[i].first->mu);
      if (buffers[i].first->tensor.raw_data() == buffers[i].second) continue;
      moved = true;  // a copy-on-write update: its old buffer is gone
      buffers[i].first->tensor = (*backups)[i].tensor;
      buffers[i].first->initialized = (*backups)[i].initialized;
    }
    if (s.ok() && !moved) return Keep(std::move(rec), args.call_frame);
    rec->work = nullptr;
    rec->retvals.clear();
    if (!s.ok()) return Disable(s.message(), args);
  }
  // Again, holding the variables: every update copies on write and the
  // recording copies it back (KeepVariableBuffers).
  const std::vector<VarState> held = DeviceVars();
  absl::Status s = RecordOnce(args, &held, rec.get());
  if (!s.ok()) {
    // Nothing recorded ran: put back what the recording's host side changed.
    for (const VarState& v : held) {
      absl::MutexLock lock(&v.var->mu);
      v.var->tensor = v.tensor;
      v.var->initialized = v.initialized;
    }
    return Disable(s.message(), args);
  }
  return Keep(std::move(rec), args.call_frame);
}

absl::Status StepReplay::RecordOnce(const Executor::Args& args, const std::vector<VarState>* held,
                                    Recording* rec) {
  RETURN_IF_ERROR(device_->BeginCapture());
  CallFrame recorded;
  recorded.args = rec->feeds;
  recorded.retvals.resize(args.call_frame->retvals.size());
  Executor::Args a = args;
  a.call_frame = &recorded;
  a.retvals_on_device = true;
  a.run_inline = true;  // one thread queues the recording
  absl::Status ran = executor_->Run(a);
  if (ran.ok() && held != nullptr) ran = KeepVariableBuffers(*held);
  absl::StatusOr<std::unique_ptr<CapturedWork>> work = device_->EndCapture();
  RETURN_IF_ERROR(ran);
  RETURN_IF_ERROR(work.status());
  rec->work = *std::move(work);
  rec->retvals = std::move(recorded.retvals);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StepReplay::VarState>> StepReplay::BackUpVariables() const {
  std::vector<VarState> out = DeviceVars();
  for (VarState& v : out) {
    if (!v.tensor.IsInitialized()) continue;
    ASSIGN_OR_RETURN(Tensor copy,
                     Tensor::Allocate(v.tensor.on_device() ? device_->allocator()
                                                           : device_->host_allocator(),
                                      v.tensor.dtype(), v.tensor.shape()));
    RETURN_IF_ERROR(device_->CopyWithinDevice(v.tensor, &copy));
    v.tensor = std::move(copy);
  }
  return out;
}

absl::Status StepReplay::Disable(absl::string_view why, const Executor::Args& args) {
  disabled_ = absl::StrCat("not recorded: ", why);
  if (LogCapture()) {
    std::fprintf(stderr, "sluice: step capture on %s: %s\n", device_->name().c_str(),
                 disabled_.c_str());
  }
  return executor_->Run(args);
}

absl::Status StepReplay::Keep(std::unique_ptr<Recording> rec, CallFrame* frame) {
  for (const VarState& v : DeviceVars()) rec->buffers.emplace_back(v.var, v.tensor.raw_data());
  recording_ = std::move(rec);
  return Replay(frame);
}

bool StepReplay::VariablesKept() const {
  for (const auto& [var, buffer] : recording_->buffers) {
    absl::MutexLock lock(&var->mu);
    if (var->tensor.raw_data() != buffer) return false;
  }
  return true;
}

absl::Status StepReplay::KeepVariableBuffers(const std::vector<VarState>& before) {
  for (const VarState& v : before) {
    Tensor now;
    {
      absl::MutexLock lock(&v.var->mu);
      now = v.var->tensor;
    }
    if (now.raw_data() == v.tensor.raw_data()) continue;
    if (!v.tensor.IsInitialized() || !now.IsInitialized() || !now.on_device() ||
        !v.tensor.on_device() || now.dtype() != v.tensor.dtype() ||
        now.shape() != v.tensor.shape()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the step gives variable ", v.var->name, " a buffer of another kind"));
    }
    // Recorded: each replay ends with the update back in the old buffer.
    Tensor old = v.tensor;
    RETURN_IF_ERROR(device_->CopyWithinDevice(now, &old));
    absl::MutexLock lock(&v.var->mu);
    v.var->tensor = v.tensor;
  }
  return absl::OkStatus();
}

absl::Status StepReplay::Replay(CallFrame* frame) {
  Recording& rec = *recording_;
  for (size_t i = 0; i < rec.feeds.size(); ++i) {
    RETURN_IF_ERROR(device_->CopyWithinDevice(frame->args[i], &rec.feeds[i]));
  }
  RETURN_IF_ERROR(rec.work->Replay());
  bool waited = false;
  for (size_t i = 0; i < rec.retvals.size(); ++i) {
    const Tensor& r = rec.retvals[i];
    if (!r.IsInitialized()) {
      frame->retvals[i] = r;
    } else if (r.on_device()) {
      // Waits for the replay (queued before it on the device).
      ASSIGN_OR_RETURN(frame->retvals[i], device_->CopyToHost(r));
      waited = true;
    } else {
      frame->retvals[i] = r.DeepCopy();  // the host's part of the step, as recorded
    }
  }
  return waited ? absl::OkStatus() : device_->Sync();
}

}  // namespace sluice
