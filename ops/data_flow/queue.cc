// The Queue resource (ops/data_flow/queue.h).
#include "ops/data_flow/queue.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "runtime/resource_handle.h"

namespace sluice {
namespace {

template <typename R>
Queue::Cancel CancelOf(std::shared_ptr<internal::Waiter<R>> w) {
  return [w = std::move(w)](absl::Status s) {
    if (w->Claim()) w->Complete(std::move(s));
  };
}

}  // namespace

Queue::Queue(Options options) : options_(std::move(options)) {
  if (options_.seed == 0 && options_.seed2 == 0) {
    rng_.seed(std::random_device()());
  } else {
    rng_.seed(options_.seed * 0x9E3779B97F4A7C15ull ^ options_.seed2);
  }
}

Queue::~Queue() {
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    const absl::Status gone = absl::CancelledError(absl::StrCat(DebugString(), " was destroyed"));
    for (EnqueueRequest& r : enqueues_) {
      if (r.waiter->Claim()) ready.push_back([w = r.waiter, gone] { w->Complete(gone); });
    }
    for (DequeueRequest& r : dequeues_) {
      if (r.waiter->Claim()) ready.push_back([w = r.waiter, gone] { w->Complete(gone); });
    }
  }
  for (auto& f : ready) f();
}

const char* Queue::KindName() const {
  return options_.kind == Kind::kFifo ? "FIFOQueue" : "RandomShuffleQueue";
}

std::string Queue::DebugString() const { return absl::StrCat(KindName(), " '", options_.name, "'"); }

absl::Status Queue::CheckTuple(const Tuple& t) const {
  if (t.size() != options_.types.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Wrong number of components in tuple. Expected ",
                                                   options_.types.size(), ", got ", t.size()));
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].dtype() != options_.types[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Type mismatch in tuple component ", i, ". Expected ",
                       DataTypeName(options_.types[i]), ", got ", DataTypeName(t[i].dtype())));
    }
    if (!options_.shapes.empty() && !options_.shapes[i].IsCompatibleWith(t[i].shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape mismatch in tuple component ", i, ". Expected ",
          options_.shapes[i].DebugString(), ", got ", t[i].shape().DebugString()));
    }
  }
  return absl::OkStatus();
}

Queue::Cancel Queue::Enqueue(std::vector<Tuple> tuples, EnqueueDone done) {
  auto w = std::make_shared<internal::Waiter<bool>>(
      [done = std::move(done)](absl::StatusOr<bool> r) { done(r.status()); });
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      w->Claim();
      ready.push_back([w, msg = absl::StrCat(DebugString(), " is closed.")] {
        w->Complete(absl::CancelledError(msg));
      });
    } else {
      enqueues_.push_back({std::deque<Tuple>(std::make_move_iterator(tuples.begin()),
                                             std::make_move_iterator(tuples.end())),
                           w});
      ServeLocked(&ready);
    }
  }
  for (auto& f : ready) f();
  return CancelOf(w);
}

Queue::Cancel Queue::Dequeue(int64_t n, DequeueDone done) {
  auto w = std::make_shared<internal::Waiter<std::vector<Tuple>>>(std::move(done));
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    dequeues_.push_back({n, w});
    ServeLocked(&ready);
  }
  for (auto& f : ready) f();
  return CancelOf(w);
}

bool Queue::is_closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

void Queue::Close(bool cancel_pending_enqueues) {
  Ready ready;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    if (cancel_pending_enqueues) {
      const absl::Status closed = absl::CancelledError(absl::StrCat(DebugString(), " is closed."));
      for (EnqueueRequest& r : enqueues_) {
        if (r.waiter->Claim()) ready.push_back([w = r.waiter, closed] { w->Complete(closed); });
      }
      enqueues_.clear();
    }
    ServeLocked(&ready);
  }
  for (auto& f : ready) f();
}

int64_t Queue::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(elements_.size());
}

void Queue::ServeLocked(Ready* ready) {
  // Alternate until neither side moves: a dequeue frees room for an enqueue
  // and an enqueue brings elements for a dequeue.
  while (ServeEnqueuesLocked(ready) | ServeDequeuesLocked(ready)) {
  }
}

bool Queue::ServeEnqueuesLocked(Ready* ready) {
  bool progress = false;
  while (!enqueues_.empty()) {
    EnqueueRequest& r = enqueues_.front();
    if (r.waiter->claimed()) {  // cancelled
      enqueues_.pop_front();
      continue;
    }
    while (!r.tuples.empty() && (options_.capacity < 0 ||
                                 static_cast<int64_t>(elements_.size()) < options_.capacity)) {
      elements_.push_back(std::move(r.tuples.front()));
      r.tuples.pop_front();
      progress = true;
    }
    if (!r.tuples.empty()) break;  // full: later enqueues wait behind this one
    if (r.waiter->Claim()) ready->push_back([w = r.waiter] { w->Complete(true); });
    enqueues_.pop_front();
    progress = true;
  }
  return progress;
}

bool Queue::ServeDequeuesLocked(Ready* ready) {
  bool progress = false;
  while (!dequeues_.empty()) {
    DequeueRequest& r = dequeues_.front();
    if (r.waiter->claimed()) {
      dequeues_.pop_front();
      continue;
    }
    const int64_t size = static_cast<int64_t>(elements_.size());
    const int64_t keep = closed_ || options_.kind == Kind::kFifo ? 0 : options_.min_after_dequeue;
    if (size - r.n < keep || size < r.n) {
      if (!closed_ || !enqueues_.empty()) break;
      // Closed, and nothing more will come.
      if (r.waiter->Claim()) {
        ready->push_back([w = r.waiter, msg = absl::StrCat(
                                            DebugString(),
                                            " is closed and has insufficient elements (requested ",
                                            r.n, ", current size ", size, ")")] {
          w->Complete(absl::OutOfRangeError(msg));
        });
      }
      dequeues_.pop_front();
      continue;
    }
    if (r.waiter->Claim()) {
      std::vector<Tuple> out;
      out.reserve(r.n);
      for (int64_t i = 0; i < r.n; ++i) out.push_back(TakeLocked());
      ready->push_back(
          [w = r.waiter, out = std::move(out)]() mutable { w->Complete(std::move(out)); });
      progress = true;
    }
    dequeues_.pop_front();
  }
  return progress;
}

Queue::Tuple Queue::TakeLocked() {
  if (options_.kind == Kind::kRandomShuffle && elements_.size() > 1) {
    std::uniform_int_distribution<size_t> pick(0, elements_.size() - 1);
    std::swap(elements_[pick(rng_)], elements_.front());
  }
  Tuple t = std::move(elements_.front());
  elements_.pop_front();
  return t;
}

absl::StatusOr<Queue*> LookupQueue(ResourceMgr* rm, const Tensor& handle,
                                   absl::string_view device) {
  ASSIGN_OR_RETURN(ResourceName n, ParseResourceHandle(handle, "queue"));
  Queue* q = rm->Find<Queue>(n.container, n.name);
  if (q == nullptr) {
    return absl::NotFoundError(absl::StrCat("queue '", n.name, "' does not exist on ", device));
  }
  return q;
}

}  // namespace sluice
