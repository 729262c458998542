// BackgroundProber: asks a yes/no question (a probe, such as "does a
// missing worker answer?") on its own thread, again and again, and keeps
// the last answer, so that a training loop reads a flag instead of waiting
// on a peer that may take a whole RPC timeout to answer.
//
//   BackgroundProber prober([&] { return SomeMissingWorkerAnswers(); },
//                           absl::Milliseconds(500));
//   ...
//   if (prober.last()) ReFormWithIt();
//
// The probe runs first right away, then `interval` after each run ends. The
// destructor stops the thread, waiting for a probe in progress to return.
// Thread-safe; the probe runs on the prober's thread only.
#ifndef SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_BACKGROUND_PROBER_H_
#define SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_BACKGROUND_PROBER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sluice {

class BackgroundProber {
 public:
  BackgroundProber(std::function<bool()> probe, absl::Duration interval);
  ~BackgroundProber();
  BackgroundProber(const BackgroundProber&) = delete;
  BackgroundProber& operator=(const BackgroundProber&) = delete;

  // The last probe's answer; false before the first one returned.
  bool last() const { return last_.load(std::memory_order_acquire); }
  // Probes finished so far.
  int64_t probes() const { return probes_.load(std::memory_order_acquire); }

 private:
  void Loop();

  const std::function<bool()> probe_;
  const absl::Duration interval_;
  std::atomic<bool> last_{false};
  std::atomic<int64_t> probes_{0};
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: started after the members above
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_COLLECTIVE_TRAINING_BACKGROUND_PROBER_H_
