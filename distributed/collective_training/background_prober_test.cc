#include "distributed/collective_training/background_prober.h"

#include <atomic>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

// Polls `done` for up to 5 s.
template <typename F>
bool Eventually(F done) {
  const absl::Time end = absl::Now() + absl::Seconds(5);
  while (!done()) {
    if (absl::Now() > end) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
  return true;
}

TEST(BackgroundProberTest, KeepsTheLastAnswer) {
  std::atomic<bool> answer{false};
  BackgroundProber prober([&] { return answer.load(); }, absl::Milliseconds(5));
  EXPECT_TRUE(Eventually([&] { return prober.probes() >= 1; }));
  EXPECT_FALSE(prober.last());
  answer = true;
  EXPECT_TRUE(Eventually([&] { return prober.last(); }));
  answer = false;
  EXPECT_TRUE(Eventually([&] { return !prober.last(); }));
  EXPECT_GE(prober.probes(), 3);
}

TEST(BackgroundProberTest, ProbesAgainAfterTheInterval) {
  std::atomic<int> calls{0};
  const absl::Time start = absl::Now();
  {
    BackgroundProber prober([&] { return ++calls > 0; }, absl::Milliseconds(100));
    EXPECT_TRUE(Eventually([&] { return calls.load() >= 3; }));
  }
  // Three probes are two intervals apart at least.
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST(BackgroundProberTest, DestructionStopsALongIntervalAtOnce) {
  std::atomic<int> calls{0};
  const absl::Time start = absl::Now();
  {
    BackgroundProber prober([&] { return ++calls > 0; }, absl::Hours(1));
    EXPECT_TRUE(Eventually([&] { return calls.load() == 1; }));
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(calls.load(), 1);
}

TEST(BackgroundProberTest, DestructionWaitsForAProbeInProgress) {
  std::atomic<bool> in_probe{false}, finished{false};
  {
    BackgroundProber prober(
        [&] {
          in_probe = true;
          absl::SleepFor(absl::Milliseconds(100));
          finished = true;
          return true;
        },
        absl::Hours(1));
    EXPECT_TRUE(Eventually([&] { return in_probe.load(); }));
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace sluice
