#include "runtime/collective/mailbox.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace sluice {

struct CollectiveMailbox::Waiter {
  std::string from_device;
  std::string key;  // without the "<to_device>|" part
  int64_t timeout_ms = 0;
  std::function<void(absl::StatusOr<Tensor>)> done;
  std::multimap<absl::Time, std::string>::iterator deadline;
};

namespace {

// Ends every abort notice's key; never the end of a message key.
constexpr absl::string_view kAbortSuffix = "!abort";

std::string BoxKey(const std::string& to_device, const std::string& key) {
  return absl::StrCat(to_device, "|", key);
}

// The part of a box key after "<to_device>|".
absl::string_view UserKey(absl::string_view box_key) {
  size_t bar = box_key.find('|');
  return bar == absl::string_view::npos ? box_key : box_key.substr(bar + 1);
}

}  // namespace

CollectiveMailbox::CollectiveMailbox(absl::Duration retention, MailboxLimits limits)
    : retention_(retention), limits_(limits), next_sweep_(absl::Now() + retention / 4),
      timer_([this] { TimerLoop(); }) {}

std::string CollectiveMailbox::AbortKey(const std::string& key_prefix) {
  return absl::StrCat(key_prefix, kAbortSuffix);
}

// A string tensor [code, message].
Tensor CollectiveMailbox::AbortNotice(const absl::Status& status) {
  return Tensor::FromVector<std::string>(
      {absl::StrCat(static_cast<int>(status.code())), std::string(status.message())});
}

namespace {

// The status an abort notice carries; Internal for a malformed notice (the
// prefix is aborted all the same: someone said the execution failed).
absl::Status NoticeStatus(const Tensor& notice, const std::string& key) {
  int code = 0;
  if (notice.dtype() != DT_STRING || notice.NumElements() != 2 ||
      !absl::SimpleAtoi(notice.flat<std::string>()[0], &code) || code <= 0 || code > 16) {
    return absl::InternalError(
        absl::StrCat("collective: a malformed abort notice arrived for '", key, "'"));
  }
  return absl::Status(static_cast<absl::StatusCode>(code), notice.flat<std::string>()[1]);
}

}  // namespace

CollectiveMailbox::~CollectiveMailbox() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    timer_cv_.Signal();
  }
  timer_.join();
  std::vector<std::shared_ptr<Waiter>> cancelled;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, w] : waiters_) cancelled.push_back(std::move(w));
    waiters_.clear();
    deadlines_.clear();
    values_.clear();
    stored_bytes_ = 0;
    landings_.clear();
  }
  for (auto& w : cancelled) {
    w->done(absl::CancelledError(absl::StrCat("collective: mailbox destroyed while waiting for '",
                                              w->key, "' from ", w->from_device)));
  }
}

absl::Status CollectiveMailbox::AbortedStatus(absl::string_view key) const {
  for (const auto& [prefix, aborted] : aborted_) {
    if (absl::StartsWith(key, prefix)) return aborted.status;
  }
  return absl::OkStatus();
}

namespace {

// "/job:w/replica:0/task:1" of "/job:w/replica:0/task:1/device:CPU:0".
absl::string_view TaskPart(absl::string_view device) {
  const size_t at = device.find("/device:");
  return at == absl::string_view::npos ? device : device.substr(0, at);
}

// OK when `sender` (authenticated, or "" for unknown) may send what a
// receive expects from `from_device`.
absl::Status CheckSender(const std::string& sender, const std::string& from_device,
                         const std::string& to_device, const std::string& key) {
  if (sender.empty() || sender == TaskPart(from_device)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("collective: '", key, "' for ", to_device, " came from task ", sender,
                   "; it is expected from ", from_device));
}

}  // namespace

absl::Status CollectiveMailbox::Deliver(const std::string& to_device, const std::string& key,
                                        Tensor value, const std::string& sender) {
  if (absl::EndsWith(key, kAbortSuffix)) {
    const std::string prefix = key.substr(0, key.size() - kAbortSuffix.size());
    Abort(prefix, NoticeStatus(value, prefix));
    return absl::OkStatus();
  }
  std::string box_key = BoxKey(to_device, key);
  std::shared_ptr<Waiter> waiter;
  Tensor landing;  // released outside the lock
  {
    absl::MutexLock lock(&mu_);
    landing = EraseLanding(box_key);  // the value is here: its landing is done
    if (!aborted_.empty() && !AbortedStatus(key).ok()) return absl::OkStatus();  // dropped
    auto it = waiters_.find(box_key);
    if (it != waiters_.end()) {
      // Refused, and the receive goes on waiting for its real sender.
      absl::Status from = CheckSender(sender, it->second->from_device, to_device, key);
      if (!from.ok()) return from;
      waiter = std::move(it->second);
      deadlines_.erase(waiter->deadline);
      waiters_.erase(it);
    } else {
      if (values_.contains(box_key)) {
        return absl::FailedPreconditionError(absl::StrCat("collective: a value for '", key, "' to ",
                                                          to_device, " was already delivered"));
      }
      const int64_t bytes = value.IsInitialized() ? value.TotalBytes() : 0;
      if (static_cast<int64_t>(values_.size()) >= limits_.max_values ||
          stored_bytes_ + bytes > limits_.max_bytes) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "collective: refused '", key, "' for ", to_device,
            sender.empty() ? "" : absl::StrCat(" from ", sender), ": ", values_.size(),
            " values (", stored_bytes_, " bytes) wait here that nobody has received; the caps are ",
            limits_.max_values, " values and ", limits_.max_bytes, " bytes"));
      }
      stored_bytes_ += bytes;
      values_.emplace(std::move(box_key), Stored{std::move(value), absl::Now(), sender});
      return absl::OkStatus();
    }
  }
  waiter->done(std::move(value));
  return absl::OkStatus();
}

void CollectiveMailbox::Send(const std::string& to_device, const std::string& key,
                             const Tensor& value, int64_t timeout_ms,
                             std::function<void(absl::Status)> done) {
  done(Deliver(to_device, key, value));
}

void CollectiveMailbox::Recv(const std::string& from_device, const std::string& to_device,
                             const std::string& key, int64_t timeout_ms,
                             std::function<void(absl::StatusOr<Tensor>)> done) {
  std::string box_key = BoxKey(to_device, key);
  absl::StatusOr<Tensor> now;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      now = absl::CancelledError(
          absl::StrCat("collective: mailbox destroyed before receiving '", key, "'"));
    } else if (absl::Status aborted = aborted_.empty() ? absl::OkStatus() : AbortedStatus(key);
               !aborted.ok()) {
      now = aborted;
    } else if (auto it = values_.find(box_key); it != values_.end()) {
      absl::Status from = CheckSender(it->second.sender, from_device, to_device, key);
      if (from.ok()) {
        now = it->second.value;
      } else {
        now = from;
      }
      EraseValue(it);
    } else if (waiters_.contains(box_key)) {
      now = absl::FailedPreconditionError(
          absl::StrCat("collective: '", key, "' for ", to_device, " is already being received"));
    } else {
      if (timeout_ms <= 0) timeout_ms = kDefaultCollectiveTimeoutMs;
      auto w = std::make_shared<Waiter>();
      w->from_device = from_device;
      w->key = key;
      w->timeout_ms = timeout_ms;
      w->done = std::move(done);
      w->deadline = deadlines_.emplace(absl::Now() + absl::Milliseconds(timeout_ms), box_key);
      if (w->deadline == deadlines_.begin()) timer_cv_.Signal();
      waiters_.emplace(std::move(box_key), std::move(w));
      return;
    }
  }
  done(std::move(now));
}

void CollectiveMailbox::ExpectInto(const std::string& to_device, const std::string& key,
                                   Tensor landing) {
  std::string box_key = BoxKey(to_device, key);
  absl::MutexLock lock(&mu_);
  if (stopping_ || values_.contains(box_key)) return;
  if (!aborted_.empty() && !AbortedStatus(key).ok()) return;
  landings_.insert_or_assign(std::move(box_key), std::move(landing));
}

Tensor CollectiveMailbox::EraseLanding(const std::string& box_key) {
  if (landings_.empty()) return Tensor();
  auto it = landings_.find(box_key);
  if (it == landings_.end()) return Tensor();
  Tensor landing = std::move(it->second);
  landings_.erase(it);
  return landing;
}

Tensor CollectiveMailbox::TakeLanding(const std::string& to_device, const std::string& key) {
  absl::MutexLock lock(&mu_);
  Tensor landing = EraseLanding(BoxKey(to_device, key));
  if (landing.IsInitialized()) ++landings_taken_;
  return landing;
}

void CollectiveMailbox::DropLanding(const std::string& to_device, const std::string& key) {
  Tensor dropped;  // released outside the lock
  absl::MutexLock lock(&mu_);
  dropped = EraseLanding(BoxKey(to_device, key));
}

void CollectiveMailbox::Abort(const std::string& key_prefix, const absl::Status& status) {
  std::vector<std::shared_ptr<Waiter>> failed;
  std::vector<Tensor> dropped;  // released outside the lock
  {
    absl::MutexLock lock(&mu_);
    // The first status for a prefix stays.
    if (aborted_.try_emplace(key_prefix, Aborted{status, absl::Now()}).second &&
        aborted_.size() > kMaxAbortedPrefixes) {
      auto oldest = aborted_.begin();
      for (auto it = aborted_.begin(); it != aborted_.end(); ++it) {
        if (it->second.at < oldest->second.at) oldest = it;
      }
      aborted_.erase(oldest);
    }
    for (auto it = landings_.begin(); it != landings_.end();) {
      if (absl::StartsWith(UserKey(it->first), key_prefix)) {
        dropped.push_back(std::move(it->second));
        landings_.erase(it++);
      } else {
        ++it;
      }
    }
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (absl::StartsWith(it->second->key, key_prefix)) {
        deadlines_.erase(it->second->deadline);
        failed.push_back(std::move(it->second));
        waiters_.erase(it++);
      } else {
        ++it;
      }
    }
    for (auto it = values_.begin(); it != values_.end();) {
      if (absl::StartsWith(UserKey(it->first), key_prefix)) {
        EraseValue(it++);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : failed) w->done(status);
}

size_t CollectiveMailbox::PendingValues() const {
  absl::MutexLock lock(&mu_);
  return values_.size();
}

int64_t CollectiveMailbox::PendingBytes() const {
  absl::MutexLock lock(&mu_);
  return stored_bytes_;
}

void CollectiveMailbox::EraseValue(absl::flat_hash_map<std::string, Stored>::iterator it) {
  if (it->second.value.IsInitialized()) stored_bytes_ -= it->second.value.TotalBytes();
  values_.erase(it);
}

size_t CollectiveMailbox::PendingLandings() const {
  absl::MutexLock lock(&mu_);
  return landings_.size();
}

int64_t CollectiveMailbox::LandingsTaken() const {
  absl::MutexLock lock(&mu_);
  return landings_taken_;
}

size_t CollectiveMailbox::AbortedPrefixes() const {
  absl::MutexLock lock(&mu_);
  return aborted_.size();
}

void CollectiveMailbox::Sweep(absl::Time now) {
  const absl::Time cutoff = now - retention_;
  for (auto it = aborted_.begin(); it != aborted_.end();) {
    if (it->second.at < cutoff) {
      aborted_.erase(it++);
    } else {
      ++it;
    }
  }
  for (auto it = values_.begin(); it != values_.end();) {
    if (it->second.at < cutoff) {
      EraseValue(it++);
    } else {
      ++it;
    }
  }
  next_sweep_ = now + std::max(retention_ / 4, absl::Milliseconds(10));
}

void CollectiveMailbox::TimerLoop() {
  mu_.Lock();
  while (!stopping_) {
    const absl::Time now = absl::Now();
    if (now >= next_sweep_) Sweep(now);
    if (deadlines_.empty() || deadlines_.begin()->first > now) {
      const absl::Time wake =
          deadlines_.empty() ? next_sweep_ : std::min(next_sweep_, deadlines_.begin()->first);
      timer_cv_.WaitWithDeadline(&mu_, wake);
      continue;
    }
    auto first = deadlines_.begin();
    // One expired waiter at a time, in deadline order: its callback may abort
    // the execution, and waiters that expire later then see that error.
    auto it = waiters_.find(first->second);
    deadlines_.erase(first);
    if (it == waiters_.end()) continue;
    std::shared_ptr<Waiter> w = std::move(it->second);
    waiters_.erase(it);
    mu_.Unlock();
    w->done(absl::DeadlineExceededError(absl::StrCat("collective: no message '", w->key, "' from ",
                                                     w->from_device, " within ", w->timeout_ms,
                                                     " ms")));
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace sluice
