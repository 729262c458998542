#include "distributed/collective_training/background_prober.h"

#include <utility>

namespace sluice {

BackgroundProber::BackgroundProber(std::function<bool()> probe, absl::Duration interval)
    : probe_(std::move(probe)), interval_(interval), thread_([this] { Loop(); }) {}

BackgroundProber::~BackgroundProber() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void BackgroundProber::Loop() {
  while (true) {
    last_.store(probe_(), std::memory_order_release);
    probes_.fetch_add(1, std::memory_order_acq_rel);
    absl::MutexLock lock(&mu_);
    // Wakes at once when stopped, else after the interval.
    mu_.AwaitWithTimeout(absl::Condition(&stop_), interval_);
    if (stop_) return;
  }
}

}  // namespace sluice
