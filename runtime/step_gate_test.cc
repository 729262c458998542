#include "runtime/step_gate.h"

#include <atomic>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(StepGateTest, AloneOnlyWhenNoStepIsInside) {
  StepGate gate;
  gate.EnterShared();
  gate.EnterShared();
  EXPECT_FALSE(gate.TryEnterAlone());
  gate.ExitShared();
  EXPECT_FALSE(gate.TryEnterAlone());
  gate.ExitShared();
  ASSERT_TRUE(gate.TryEnterAlone());
  EXPECT_FALSE(gate.TryEnterAlone()); // one recorder at a time
  gate.ExitAlone();
  EXPECT_TRUE(gate.TryEnterAlone());
  gate.ExitAlone();
}

TEST(StepGateTest, StepsWaitWhileOneIsAloneAndMayLeaveOnAnotherThread) {
  StepGate gate;
  ASSERT_TRUE(gate.TryEnterAlone());
  std::atomic<bool> entered{false};
  absl::Notification left;
  std::thread step([&] {
    gate.EnterShared();
    entered = true;
    // The pass ends on another thread, as an asynchronous step's does.
    std::thread([&] {
      gate.ExitShared();
      left.Notify();
    }).join();
  });
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_FALSE(entered.load()); // still kept out
  gate.ExitAlone();
  step.join();
  EXPECT_TRUE(entered.load());
  ASSERT_TRUE(left.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(gate.TryEnterAlone());
  gate.ExitAlone();
}

} // namespace
} // namespace sluice
