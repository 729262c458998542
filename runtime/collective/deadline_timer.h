// CollectiveTimer (internal to the collective executor; not named DeadlineTimer,
// which ops/data_flow/internal/async_wait.h already defines in sluice::internal): runs callbacks at
// deadlines on one thread, unless cancelled first.
//
//   CollectiveTimer timer;
//   uint64_t id = timer.Schedule(absl::Now() + absl::Milliseconds(200), [] { ... });
//   if (timer.Cancel(id)) { /* the callback will not run */ }
//
// Thread-safe. Callbacks run on the timer's thread without its lock held and
// must not block for long. The destructor drops callbacks not yet run.
#ifndef SLUICE_RUNTIME_COLLECTIVE_DEADLINE_TIMER_H_
#define SLUICE_RUNTIME_COLLECTIVE_DEADLINE_TIMER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice {
namespace internal {

class CollectiveTimer {
 public:
  CollectiveTimer();
  ~CollectiveTimer();
  CollectiveTimer(const CollectiveTimer&) = delete;
  CollectiveTimer& operator=(const CollectiveTimer&) = delete;

  // Runs `fn` at `deadline` (at once, on the timer thread, if past). Returns
  // an id for Cancel.
  uint64_t Schedule(absl::Time deadline, std::function<void()> fn);
  // True when the callback was still pending and now never runs.
  bool Cancel(uint64_t id);

 private:
  void Loop();

  absl::Mutex mu_;
  absl::CondVar cv_;
  // (deadline, id) -> callback
  std::map<std::pair<absl::Time, uint64_t>, std::function<void()>> pending_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, absl::Time> deadline_of_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace internal
}  // namespace sluice

#endif  // SLUICE_RUNTIME_COLLECTIVE_DEADLINE_TIMER_H_
