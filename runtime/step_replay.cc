#include "runtime/step_replay.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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
// DecidingFeeds.)
bool BlocksRecording(const Node& n, const OpKernel* kernel) {
  const OpDef& def = n.op_def();
  if (!def.is_stateful || def.is_variable || n.op() == kArgOp || n.op() == kRetvalOp) {
    return false;
  }
  return kernel == nullptr || !kernel->ReplaysRight();
}

std::string NoRepeatReason() {
  return absl::StrCat("in ", StepReplay::kMaxRunsWithoutRepeat,
                      " runs in a row no signature (feed shapes and keyed feed values) came "
                      "again");
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
  absl::StatusOr<std::vector<int>> deciding =
      DecidingFeeds(executor->graph(),
                    [executor](const Node& n, int i) { return executor->InputOnHost(n, i); });
  if (!deciding.ok()) {
    if (LogCapture()) {
      std::fprintf(stderr, "sluice: step capture on %s: not recorded: %s\n",
                   device->name().c_str(), std::string(deciding.status().message()).c_str());
    }
    return nullptr;
  }
  return std::unique_ptr<StepReplay>(
      new StepReplay(device, executor, options, *std::move(deciding)));
}

StepReplay::StepReplay(Device* device, Executor* executor, StepReplayOptions options,
                       std::vector<int> deciding_feeds)
    : device_(device),
      executor_(executor),
      options_(options),
      deciding_feeds_(std::move(deciding_feeds)) {}

StepReplay::~StepReplay() = default;

std::string StepReplay::disabled_reason() const {
  absl::MutexLock lock(&mu_);
  return disabled_;
}

bool StepReplay::Deciding(size_t feed) const {
  return std::binary_search(deciding_feeds_.begin(), deciding_feeds_.end(),
                            static_cast<int>(feed));
}

bool StepReplay::Keyable(const CallFrame& frame) const {
  size_t bytes = 0;
  for (int i : deciding_feeds_) {
    if (i < static_cast<int>(frame.args.size())) bytes += frame.args[i].TotalBytes();
  }
  return bytes <= kMaxDecidingFeedBytes;
}

StepReplay::FeedKey StepReplay::KeyOf(const CallFrame& frame) const {
  FeedKey key;
  key.shapes.reserve(frame.args.size());
  for (const Tensor& t : frame.args) key.shapes.emplace_back(t.dtype(), t.shape());
  for (int i : deciding_feeds_) {  // sorted, none negative
    if (i >= static_cast<int>(frame.args.size())) break;
    const Tensor& t = frame.args[i];
    key.values.emplace_back(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  return key;
}

bool StepReplay::Matches(const FeedKey& key, const CallFrame& frame) const {
  if (key.shapes.size() != frame.args.size()) return false;
  for (size_t i = 0; i < key.shapes.size(); ++i) {
    if (key.shapes[i].first != frame.args[i].dtype() ||
        key.shapes[i].second != frame.args[i].shape()) {
      return false;
    }
  }
  for (size_t k = 0; k < key.values.size(); ++k) {
    // Same shape and type as recorded (above): the same byte count.
    const Tensor& t = frame.args[deciding_feeds_[k]];
    if (std::memcmp(key.values[k].data(), t.raw_data(), key.values[k].size()) != 0) return false;
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
  if (!disabled_.empty() || !Keyable(frame)) return false;
  for (const std::unique_ptr<Recording>& rec : recordings_) {
    if (Matches(rec->key, frame)) return false;
  }
  for (const Seen& seen : seen_) {
    if (Matches(seen.key, frame)) return seen.runs >= RunsBeforeRecording(seen);
  }
  return false;
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
  if (!Keyable(frame)) {
    if (LogCapture() && !logged_unkeyable_) {
      logged_unkeyable_ = true;
      std::fprintf(stderr,
                   "sluice: step capture on %s: a step whose deciding feeds hold over %zu bytes "
                   "runs through the executor\n",
                   device_->name().c_str(), kMaxDecidingFeedBytes);
    }
    if (NothingRepeats(false)) return Disable(NoRepeatReason(), args);
    return executor_->Run(args);
  }
  const uint64_t epoch = CaptureEpoch();
  if (std::erase_if(recordings_, [epoch](const auto& rec) { return rec->epoch != epoch; }) > 0) {
    seen_.clear();  // a setting their kernels read has changed: start over
  }
  bool moved = false;
  if (auto rec = FindRecording(frame); rec != recordings_.end()) {
    if (VariablesKept(**rec)) {
      runs_without_repeat_ = 0;
      recordings_.splice(recordings_.begin(), recordings_, rec);  // the most recent
      *replayed = true;
      return Replay(*recordings_.front(), args.call_frame);
    }
    recordings_.erase(rec);  // a variable has a new buffer: record again later
    moved = true;
  }
  bool counted_before;
  Seen& seen = CountOf(frame, &counted_before);
  if (NothingRepeats(counted_before)) return Disable(NoRepeatReason(), args);
  if (moved) seen.runs = 0;
  if (seen.runs >= RunsBeforeRecording(seen)) {
    if (!may_record) return executor_->Run(args);
    const FeedKey key = seen.key;
    absl::Status s = Record(args, key);
    *replayed = s.ok() && disabled_.empty();
    return s;
  }
  // With mu_ held: the steps of one StepReplay run one at a time until
  // recording is disabled.
  absl::Status s = executor_->Run(args);
  if (s.ok()) ++seen.runs;
  return s;
}

std::list<std::unique_ptr<StepReplay::Recording>>::iterator StepReplay::FindRecording(
    const CallFrame& frame) {
  for (auto it = recordings_.begin(); it != recordings_.end(); ++it) {
    if (Matches((*it)->key, frame)) return it;
  }
  return recordings_.end();
}

int StepReplay::RunsBeforeRecording(const Seen& seen) const {
  // Doubled for each time the signature's recording was dropped to make
  // room: a cycle of more signatures than recordings would otherwise record
  // at every step.
  return options_.min_runs_before_capture << std::min(seen.drops, 4);
}

void StepReplay::DropRecording(std::list<std::unique_ptr<Recording>>::iterator rec) {
  for (Seen& seen : seen_) {
    if (seen.key == (*rec)->key) {
      seen.runs = 0;
      ++seen.drops;
      break;
    }
  }
  recordings_.erase(rec);
}

void StepReplay::PutBack(const VarState& v) {
  absl::MutexLock lock(&v.var->mu);
  v.var->tensor = v.tensor;
  v.var->initialized = v.initialized;
}

bool StepReplay::NothingRepeats(bool repeated) {
  runs_without_repeat_ = repeated ? 0 : runs_without_repeat_ + 1;
  return runs_without_repeat_ >= kMaxRunsWithoutRepeat && recordings_.empty();
}

StepReplay::Seen& StepReplay::CountOf(const CallFrame& frame, bool* counted_before) {
  auto it = seen_.begin();
  while (it != seen_.end() && !Matches(it->key, frame)) ++it;
  *counted_before = it != seen_.end();
  if (it == seen_.end()) {
    seen_.push_front({KeyOf(frame), 0});
    if (seen_.size() > kMaxSignaturesCounted) seen_.pop_back();
  } else {
    seen_.splice(seen_.begin(), seen_, it);
  }
  return seen_.front();
}

absl::Status StepReplay::Record(const Executor::Args& args, const FeedKey& key) {
  // Room first: the least recently replayed recording goes.
  while (!recordings_.empty() &&
         static_cast<int>(recordings_.size()) >= std::max(options_.max_recordings, 1)) {
    DropRecording(std::prev(recordings_.end()));
  }
  absl::StatusOr<std::unique_ptr<Recording>> rec = TryRecord(args, key);
  if (absl::IsResourceExhausted(rec.status()) && !recordings_.empty()) {
    // The memory the other recordings hold may be what it lacked; nothing
    // of the failed recording ran, so the step may be recorded again.
    while (!recordings_.empty()) DropRecording(recordings_.begin());
    rec = TryRecord(args, key);
  }
  if (!rec.ok()) return Disable(rec.status().message(), args);
  return Keep(*std::move(rec), args.call_frame);
}

absl::StatusOr<std::unique_ptr<StepReplay::Recording>> StepReplay::TryRecord(
    const Executor::Args& args, const FeedKey& key) {
  auto rec = std::make_unique<Recording>();
  rec->key = key;
  rec->epoch = CaptureEpoch();
  for (size_t i = 0; i < args.call_frame->args.size(); ++i) {
    const Tensor& t = args.call_frame->args[i];
    if (HoldsObjects(t.dtype())) {
      // Neither copied to a device nor compared by its bytes.
      return absl::FailedPreconditionError(
          absl::StrCat("a feed of type ", DataTypeName(t.dtype()), " cannot be recorded"));
    }
    if (Deciding(i)) {
      // Read by the host's decisions while recording; replays are for this
      // value only.
      rec->feeds.push_back(t.DeepCopy());
      continue;
    }
    ASSIGN_OR_RETURN(Tensor on_device, device_->CopyFromHost(t));
    rec->feeds.push_back(std::move(on_device));
  }
  // First with the variables unheld, so that updates stay in place; their
  // values are backed up (on the device) in case the recording fails. (An
  // update that copies on write here does so in the executor's runs too,
  // which have already given the variable another buffer than the kept
  // recordings have.)
  {
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
        bool same;
        {
          absl::MutexLock lock(&buffers[i].first->mu);
          same = buffers[i].first->tensor.raw_data() == buffers[i].second;
        }
        if (same) continue;
        moved = true;  // a copy-on-write update: its old buffer is gone
        PutBack((*backups)[i]);
      }
      RETURN_IF_ERROR(s);
      if (!moved) return rec;
      rec->work = nullptr;
      rec->retvals.clear();
    }
  }
  // Holding the variables: every update copies on write and the recording
  // copies it back (KeepVariableBuffers), so they keep their buffers.
  const std::vector<VarState> held = DeviceVars();
  absl::Status s = RecordOnce(args, &held, rec.get());
  if (!s.ok()) {
    // Nothing recorded ran: put back what the recording's host side changed.
    for (const VarState& v : held) PutBack(v);
    return s;
  }
  return rec;
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
  if (ran.ok() && held != nullptr) ran = KeepVariableBuffers(*held, &recorded.retvals);
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
  StopRecording(absl::StrCat("not recorded: ", why));
  return executor_->Run(args);
}

void StepReplay::StopRecording(std::string why) {
  recordings_.clear();
  disabled_ = std::move(why);
  if (LogCapture()) {
    std::fprintf(stderr, "sluice: step capture on %s: %s\n", device_->name().c_str(),
                 disabled_.c_str());
  }
}

absl::Status StepReplay::Keep(std::unique_ptr<Recording> rec, CallFrame* frame) {
  for (const VarState& v : DeviceVars()) rec->buffers.emplace_back(v.var, v.tensor.raw_data());
  recordings_.push_front(std::move(rec));
  return Replay(*recordings_.front(), frame);
}

bool StepReplay::VariablesKept(const Recording& rec) const {
  for (const auto& [var, buffer] : rec.buffers) {
    absl::MutexLock lock(&var->mu);
    if (var->tensor.raw_data() != buffer) return false;
  }
  return true;
}

absl::Status StepReplay::KeepVariableBuffers(const std::vector<VarState>& before,
                                             std::vector<Tensor>* retvals) {
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
    Tensor old = v.tensor;
    // A fetch of the value from before the update reads the old buffer,
    // which the copy back overwrites: it gets a copy of its own first
    // (recorded too, so each replay copies it anew).
    const char* old_begin = static_cast<const char*>(old.raw_data());
    for (Tensor& r : *retvals) {
      if (!r.IsInitialized() || !r.on_device()) continue;
      const char* begin = static_cast<const char*>(r.raw_data());
      if (begin >= old_begin + old.TotalBytes() || old_begin >= begin + r.TotalBytes()) continue;
      ASSIGN_OR_RETURN(Tensor copy, Tensor::Allocate(device_->allocator(), r.dtype(), r.shape()));
      RETURN_IF_ERROR(device_->CopyWithinDevice(r, &copy));
      r = std::move(copy);
    }
    // Recorded: each replay ends with the update back in the old buffer.
    RETURN_IF_ERROR(device_->CopyWithinDevice(now, &old));
    absl::MutexLock lock(&v.var->mu);
    v.var->tensor = v.tensor;
  }
  return absl::OkStatus();
}

absl::Status StepReplay::Replay(Recording& rec, CallFrame* frame) {
  absl::Status s = ReplayOnce(rec, frame);
  if (!s.ok()) {
    // It would fail again: later runs go through the executor. (This one's
    // device work may have partly run, so it is not run again here.)
    StopRecording(absl::StrCat("a replay failed: ", s.message()));
  }
  return s;
}

absl::Status StepReplay::ReplayOnce(Recording& rec, CallFrame* frame) {
  for (size_t i = 0; i < rec.feeds.size(); ++i) {
    if (Deciding(i)) continue;  // the value recorded (Matches)
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
