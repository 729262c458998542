#include "ops/data_flow/internal/sync_token_queue.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {
namespace internal {

SyncTokenQueue::SyncTokenQueue(std::string name, std::shared_ptr<DeadlineTimer> timer)
    : name_(std::move(name)), timer_(std::move(timer)) {}

SyncTokenQueue::~SyncTokenQueue() {
  std::deque<std::shared_ptr<Waiter<int64_t>>> waiters;
  {
    absl::MutexLock lock(&mu_);
    waiters.swap(waiters_);
  }
  for (auto& w : waiters) {
    if (w->Claim()) {
      w->Complete(absl::AbortedError(
          absl::StrCat("token queue '", name_, "' was destroyed while a dequeue waited")));
    }
  }
}

std::string SyncTokenQueue::DebugString() const {
  return absl::StrCat("SyncTokenQueue '", name_, "' (", size(), " tokens)");
}

void SyncTokenQueue::Enqueue(absl::Span<const int64_t> tokens) {
  std::vector<Served> served;
  {
    absl::MutexLock lock(&mu_);
    tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
    Serve(&served);
  }
  for (Served& s : served) s.first->Complete(s.second);
}

void SyncTokenQueue::Dequeue(absl::Duration timeout, DequeueDone done) {
  auto waiter = std::make_shared<Waiter<int64_t>>(std::move(done));
  std::vector<Served> served;
  {
    absl::MutexLock lock(&mu_);
    waiters_.push_back(waiter);
    Serve(&served);
  }
  for (Served& s : served) s.first->Complete(s.second);
  if (timeout > absl::ZeroDuration() && !waiter->claimed()) {
    if (timer_ == nullptr) {
      if (waiter->Claim()) {
        waiter->Complete(absl::InternalError(
            absl::StrCat("token queue '", name_, "' has no timer for a dequeue with a timeout")));
      }
      return;
    }
    std::string message = absl::StrCat("timed out after ", absl::FormatDuration(timeout),
                                       " waiting for a token in queue '", name_, "'");
    timer_->Schedule(absl::Now() + timeout, [waiter, message = std::move(message)] {
      if (waiter->Claim()) waiter->Complete(absl::DeadlineExceededError(message));
    });
  }
}

size_t SyncTokenQueue::size() const {
  absl::MutexLock lock(&mu_);
  return tokens_.size();
}

void SyncTokenQueue::Serve(std::vector<Served>* served) {
  while (!waiters_.empty() && !tokens_.empty()) {
    std::shared_ptr<Waiter<int64_t>> w = std::move(waiters_.front());
    waiters_.pop_front();
    if (!w->Claim()) continue;  // timed out
    served->emplace_back(std::move(w), tokens_.front());
    tokens_.pop_front();
  }
  // Waiters that timed out while no token came.
  while (!waiters_.empty() && waiters_.front()->claimed()) waiters_.pop_front();
}

}  // namespace internal
}  // namespace sluice
