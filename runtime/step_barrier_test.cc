#include "runtime/step_barrier.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(StepBarrierTest, DoneOnceAfterEveryPartWithOkWhenAllSucceed) {
  int done_calls = 0, first_error_calls = 0;
  absl::Status result = absl::UnknownError("unset");
  StepBarrier* b = StepBarrier::Create(
      3, [&](int, const absl::Status&) { ++first_error_calls; },
      [&](absl::Status s) {
        ++done_calls;
        result = s;
      });
  auto r1 = b->Get(0), r2 = b->Get(1), r3 = b->Get(2);
  r1(absl::OkStatus());
  r2(absl::OkStatus());
  EXPECT_EQ(done_calls, 0);
  r3(absl::OkStatus());
  EXPECT_EQ(done_calls, 1);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(first_error_calls, 0);
}

TEST(StepBarrierTest, TheRootCauseWinsOverEchoesWhicheverComesFirst) {
  std::vector<absl::Status> first_errors;
  absl::Status result;
  StepBarrier* b = StepBarrier::Create(
      3, [&](int, const absl::Status& s) { first_errors.push_back(s); },
      [&](absl::Status s) { result = s; });
  auto r1 = b->Get(0), r2 = b->Get(1), r3 = b->Get(2);
  r1(absl::CancelledError("stopped because of another part"));
  r2(absl::UnavailableError("task 2 is gone"));
  r3(absl::AbortedError("aborted"));
  ASSERT_EQ(first_errors.size(), 1u);  // once, with the first failure
  EXPECT_EQ(first_errors[0].code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(result.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(result.message(), "task 2 is gone");
}

TEST(StepBarrierTest, OnlyEchoesGiveTheFirstEcho) {
  absl::Status result;
  StepBarrier* b = StepBarrier::Create(2, nullptr, [&](absl::Status s) { result = s; });
  auto r1 = b->Get(0), r2 = b->Get(1);
  r1(absl::AbortedError("first"));
  r2(absl::CancelledError("second"));
  EXPECT_EQ(result.message(), "first");
}

TEST(StepBarrierTest, ZeroPartsIsDoneAtOnce) {
  bool done = false;
  EXPECT_EQ(StepBarrier::Create(0, nullptr, [&](absl::Status s) { done = s.ok(); }), nullptr);
  EXPECT_TRUE(done);
}

// Reports from many threads, while the first failure's handler still runs:
// done comes once, after the handler returned.
TEST(StepBarrierTest, ConcurrentReportsAndASlowFirstErrorHandler) {
  for (int round = 0; round < 50; ++round) {
    std::atomic<bool> handler_running{false}, done_during_handler{false};
    std::atomic<int> done_calls{0};
    constexpr int kParts = 8;
    StepBarrier* b = StepBarrier::Create(
        kParts,
        [&](int, const absl::Status&) {
          handler_running = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          handler_running = false;
        },
        [&](absl::Status) {
          if (handler_running) done_during_handler = true;
          ++done_calls;
        });
    std::vector<std::thread> threads;
    for (int i = 0; i < kParts; ++i) {
      threads.emplace_back([r = b->Get(i), i] {
        r(i == 3 ? absl::InternalError("boom") : absl::OkStatus());
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(done_calls.load(), 1);
    EXPECT_FALSE(done_during_handler.load());
  }
}

}  // namespace
}  // namespace sluice
