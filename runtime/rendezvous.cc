#include "runtime/rendezvous.h"

#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace sluice {

std::string Rendezvous::CreateKey(int64_t step_id, absl::string_view src_device,
                                  uint64_t src_incarnation, absl::string_view dst_device,
                                  absl::string_view tensor_name, FrameAndIter frame_iter) {
  return absl::StrCat(step_id, ";", src_device, ";", absl::Hex(src_incarnation), ";",
                      dst_device, ";", tensor_name, ";", absl::Hex(frame_iter.frame_id), ":",
                      frame_iter.iter);
}

absl::StatusOr<Rendezvous::ParsedKey> Rendezvous::ParseKey(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  ParsedKey out;
  std::pair<absl::string_view, absl::string_view> frame_iter;
  if (parts.size() == 6) frame_iter = absl::StrSplit(parts[5], absl::MaxSplits(':', 1));
  if (parts.size() != 6 || !absl::SimpleAtoi(parts[0], &out.step_id) ||
      !absl::SimpleHexAtoi(parts[2], &out.src_incarnation) || parts[1].empty() ||
      parts[3].empty() || parts[4].empty() ||
      !absl::SimpleHexAtoi(frame_iter.first, &out.frame_iter.frame_id) ||
      !absl::SimpleAtoi(frame_iter.second, &out.frame_iter.iter)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad rendezvous key '", key,
                     "': want step;src_device;incarnation;dst_device;tensor;frame:iter"));
  }
  out.src_device = std::string(parts[1]);
  out.dst_device = std::string(parts[3]);
  out.tensor_name = std::string(parts[4]);
  return out;
}

LocalRendezvous::~LocalRendezvous() {
  // Receivers still waiting are told rather than forgotten.
  StartAbort(absl::CancelledError("rendezvous destroyed before the tensor was sent"));
}

absl::Status LocalRendezvous::Send(const std::string& key, const Tensor& value) {
  DoneCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return abort_status_;
    Slot& slot = table_[key];
    if (slot.sent) {
      return absl::InternalError(absl::StrCat("rendezvous key '", key, "' was sent twice"));
    }
    slot.sent = true;
    if (slot.waiter) {
      // The slot stays, emptied, so a second Send or Recv of the key is refused.
      waiter = std::move(slot.waiter);
      slot.waiter = nullptr;
      slot.received = true;
    } else {
      slot.value = value;
    }
  }
  if (waiter) waiter(absl::OkStatus(), value);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) {
      status = abort_status_;
    } else {
      Slot& slot = table_[key];
      if (slot.received || slot.waiter) {
        status = absl::InternalError(absl::StrCat("rendezvous key '", key, "' was received twice"));
      } else if (!slot.sent) {
        slot.waiter = std::move(done);
        return;
      } else {
        value = std::move(slot.value);
        slot.value = Tensor();
        slot.received = true;
      }
    }
  }
  done(status, std::move(value));
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  absl::Status reason;
  {
    absl::MutexLock lock(&mu_);
    if (abort_status_.ok()) {
      abort_status_ = status.ok() ? absl::CancelledError("step cancelled") : status;
      aborted_.store(true, std::memory_order_release);
    }
    reason = abort_status_;
    for (auto& [key, slot] : table_) {
      if (slot.waiter) waiters.push_back(std::move(slot.waiter));
    }
    table_.clear();
  }
  for (DoneCallback& w : waiters) w(reason, Tensor());
}

absl::Status LocalRendezvous::abort_status() const {
  absl::MutexLock lock(&mu_);
  return abort_status_;
}

}  // namespace sluice
