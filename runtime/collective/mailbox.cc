#include "runtime/collective/mailbox.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sluice {

struct CollectiveMailbox::Waiter {
  std::string from_device;
  std::string key;  // without the "<to_device>|" part
  int64_t timeout_ms = 0;
  std::function<void(absl::StatusOr<Tensor>)> done;
  std::multimap<absl::Time, std::string>::iterator deadline;
};

namespace {

std::string BoxKey(const std::string& to_device, const std::string& key) {
  return absl::StrCat(to_device, "|", key);
}

// The part of a box key after "<to_device>|".
absl::string_view UserKey(absl::string_view box_key) {
  size_t bar = box_key.find('|');
  return bar == absl::string_view::npos ? box_key : box_key.substr(bar + 1);
}

}  // namespace

CollectiveMailbox::CollectiveMailbox() : timer_([this] { TimerLoop(); }) {}

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
    landings_.clear();
  }
  for (auto& w : cancelled) {
    w->done(absl::CancelledError(absl::StrCat("collective: mailbox destroyed while waiting for '",
                                              w->key, "' from ", w->from_device)));
  }
}

absl::Status CollectiveMailbox::AbortedStatus(absl::string_view key) const {
  for (const auto& [prefix, status] : aborted_) {
    if (absl::StartsWith(key, prefix)) return status;
  }
  return absl::OkStatus();
}

absl::Status CollectiveMailbox::Deliver(const std::string& to_device, const std::string& key,
                                        Tensor value) {
  std::string box_key = BoxKey(to_device, key);
  std::shared_ptr<Waiter> waiter;
  Tensor landing;  // released outside the lock
  {
    absl::MutexLock lock(&mu_);
    landing = EraseLanding(box_key);  // the value is here: its landing is done
    if (!aborted_.empty() && !AbortedStatus(key).ok()) return absl::OkStatus();  // dropped
    auto it = waiters_.find(box_key);
    if (it != waiters_.end()) {
      waiter = std::move(it->second);
      deadlines_.erase(waiter->deadline);
      waiters_.erase(it);
    } else {
      auto [slot, inserted] = values_.try_emplace(std::move(box_key), std::move(value));
      if (!inserted) {
        return absl::FailedPreconditionError(absl::StrCat("collective: a value for '", key, "' to ",
                                                          to_device, " was already delivered"));
      }
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
      now = std::move(it->second);
      values_.erase(it);
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
    aborted_.emplace(key_prefix, status);  // the first status for a prefix stays
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
        values_.erase(it++);
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

size_t CollectiveMailbox::PendingLandings() const {
  absl::MutexLock lock(&mu_);
  return landings_.size();
}

int64_t CollectiveMailbox::LandingsTaken() const {
  absl::MutexLock lock(&mu_);
  return landings_taken_;
}

void CollectiveMailbox::TimerLoop() {
  mu_.Lock();
  while (!stopping_) {
    if (deadlines_.empty()) {
      timer_cv_.Wait(&mu_);
      continue;
    }
    auto first = deadlines_.begin();
    if (first->first > absl::Now()) {
      timer_cv_.WaitWithDeadline(&mu_, first->first);
      continue;
    }
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
