// Unit tests of the resources behind the data-flow ops: DeadlineTimer,
// GradientAccumulator, SyncTokenQueue (no session; see data_flow_ops_test
// for the ops).
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "ops/data_flow/internal/async_wait.h"
#include "ops/data_flow/internal/gradient_accumulator.h"
#include "ops/data_flow/internal/sync_token_queue.h"
#include "runtime/allocator.h"

namespace sluice {
namespace internal {
namespace {

// Records the result of one take.
struct TakeResult {
  absl::Notification done;
  std::optional<absl::StatusOr<Tensor>> result;
  GradientAccumulator::TakeDone Callback() {
    return [this](absl::StatusOr<Tensor> r) {
      result = std::move(r);
      done.Notify();
    };
  }
};

std::vector<float> Values(const Tensor& t) {
  absl::Span<const float> v = t.flat<float>();
  return std::vector<float>(v.begin(), v.end());
}

TEST(DeadlineTimerTest, RunsClosuresInDeadlineOrder) {
  DeadlineTimer timer;
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last;
  const absl::Time now = absl::Now();
  timer.Schedule(now + absl::Milliseconds(60), [&] {
    absl::MutexLock l(&mu);
    order.push_back(2);
    last.Notify();
  });
  timer.Schedule(now + absl::Milliseconds(20), [&] {
    absl::MutexLock l(&mu);
    order.push_back(1);
  });
  timer.Schedule(now - absl::Seconds(1), [&] {  // already due
    absl::MutexLock l(&mu);
    order.push_back(0);
  });
  ASSERT_TRUE(last.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_GE(absl::Now() - now, absl::Milliseconds(60));
  absl::MutexLock l(&mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(DeadlineTimerTest, DestroyingDropsPendingClosures) {
  std::atomic<bool> ran{false};
  {
    DeadlineTimer timer;
    timer.Schedule(absl::Now() + absl::Hours(1), [&] { ran = true; });
  }
  EXPECT_FALSE(ran);
}

TEST(GradientAccumulatorTest, AverageOfEnoughGradientsAndStepAdvance) {
  GradientAccumulator acc("g", DT_FLOAT, TensorShape({3}), std::make_shared<DeadlineTimer>());
  Allocator* a = DefaultCpuAllocator();
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({1, 2, 3}), a).ok());
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({3, 6, -3}), a).ok());
  ASSERT_TRUE(acc.Apply(5, Tensor::FromVector<float>({2, 1, 9}), a).ok());  // ahead: counts
  EXPECT_EQ(acc.stats().num_accumulated, 3);
  TakeResult take;
  acc.Take(3, absl::ZeroDuration(), take.Callback());
  ASSERT_TRUE(take.done.HasBeenNotified());  // enough were in: completes at once
  ASSERT_TRUE(take.result->ok()) << take.result->status();
  EXPECT_EQ(Values(**take.result), (std::vector<float>{2, 3, 3}));
  GradientAccumulator::Stats s = acc.stats();
  EXPECT_EQ(s.global_step, 1);
  EXPECT_EQ(s.num_accumulated, 0);
  EXPECT_EQ(s.num_taken, 1);
  // Step 0 is over: its late gradient is dropped, with no error.
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({100, 100, 100}), a).ok());
  EXPECT_EQ(acc.stats().num_accumulated, 0);
  EXPECT_EQ(acc.stats().num_stale, 1);
}

TEST(GradientAccumulatorTest, TakeWaitsForEnoughGradients) {
  GradientAccumulator acc("g", DT_FLOAT, TensorShape::Unknown(), nullptr);
  Allocator* a = DefaultCpuAllocator();
  TakeResult take;
  acc.Take(2, absl::ZeroDuration(), take.Callback());
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({1, 1}), a).ok());
  EXPECT_FALSE(take.done.HasBeenNotified());
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({2, 4}), a).ok());
  ASSERT_TRUE(take.done.HasBeenNotified());
  EXPECT_EQ(Values(**take.result), (std::vector<float>{1.5f, 2.5f}));
}

TEST(GradientAccumulatorTest, TimeoutIsDeadlineExceededAndKeepsGradients) {
  GradientAccumulator acc("g", DT_DOUBLE, TensorShape({1}), std::make_shared<DeadlineTimer>());
  Allocator* a = DefaultCpuAllocator();
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<double>({4}), a).ok());
  TakeResult take;
  acc.Take(2, absl::Milliseconds(30), take.Callback());
  ASSERT_TRUE(take.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_FALSE(take.result->ok());
  EXPECT_EQ(take.result->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(take.result->status().message().find("'g'"), std::string::npos);
  EXPECT_EQ(acc.stats().num_accumulated, 1);
  EXPECT_EQ(acc.stats().global_step, 0);
  // The next take gets them (the timed-out one is skipped).
  TakeResult next;
  acc.Take(2, absl::ZeroDuration(), next.Callback());
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<double>({2}), a).ok());
  ASSERT_TRUE(next.done.HasBeenNotified());
  EXPECT_EQ((*next.result)->flat<double>()[0], 3.0);
}

TEST(GradientAccumulatorTest, SetGlobalStepDropsOldSum) {
  GradientAccumulator acc("g", DT_FLOAT, TensorShape({1}), nullptr);
  Allocator* a = DefaultCpuAllocator();
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({1}), a).ok());
  acc.SetGlobalStep(0);  // unchanged: kept
  EXPECT_EQ(acc.stats().num_accumulated, 1);
  acc.SetGlobalStep(10);
  EXPECT_EQ(acc.stats().num_accumulated, 0);
  EXPECT_EQ(acc.stats().num_stale, 1);
  ASSERT_TRUE(acc.Apply(9, Tensor::FromVector<float>({1}), a).ok());
  EXPECT_EQ(acc.stats().num_stale, 2);
  ASSERT_TRUE(acc.Apply(10, Tensor::FromVector<float>({1}), a).ok());
  EXPECT_EQ(acc.stats().num_accumulated, 1);
}

TEST(GradientAccumulatorTest, RejectsOtherDtypeAndShape) {
  GradientAccumulator acc("g", DT_FLOAT, TensorShape({-1}), nullptr);
  Allocator* a = DefaultCpuAllocator();
  absl::Status s = acc.Apply(0, Tensor::FromVector<double>({1}), a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  s = acc.Apply(0, Tensor::FromVector<float>({1, 2}, TensorShape({1, 2})), a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  ASSERT_TRUE(acc.Apply(0, Tensor::FromVector<float>({1, 2}), a).ok());
  s = acc.Apply(0, Tensor::FromVector<float>({1, 2, 3}), a);  // this step's are [2]
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("[2]"), std::string::npos) << s;
}

TEST(GradientAccumulatorTest, DestroyingAbortsWaitingTakes) {
  TakeResult take;
  {
    GradientAccumulator acc("g", DT_FLOAT, TensorShape({1}), nullptr);
    acc.Take(1, absl::ZeroDuration(), take.Callback());
    EXPECT_FALSE(take.done.HasBeenNotified());
  }
  ASSERT_TRUE(take.done.HasBeenNotified());
  EXPECT_EQ(take.result->status().code(), absl::StatusCode::kAborted);
}

struct DequeueResult {
  absl::Notification done;
  std::optional<absl::StatusOr<int64_t>> result;
  SyncTokenQueue::DequeueDone Callback() {
    return [this](absl::StatusOr<int64_t> r) {
      result = std::move(r);
      done.Notify();
    };
  }
};

TEST(SyncTokenQueueTest, WaitingDequeuesAreServedInOrder) {
  SyncTokenQueue q("q", nullptr);
  DequeueResult first, second, third;
  q.Dequeue(absl::ZeroDuration(), first.Callback());
  q.Dequeue(absl::ZeroDuration(), second.Callback());
  EXPECT_FALSE(first.done.HasBeenNotified());
  q.Enqueue({7});
  ASSERT_TRUE(first.done.HasBeenNotified());
  EXPECT_EQ(**first.result, 7);
  EXPECT_FALSE(second.done.HasBeenNotified());
  q.Enqueue({8, 9});
  EXPECT_EQ(**second.result, 8);
  EXPECT_EQ(q.size(), 1u);
  q.Dequeue(absl::ZeroDuration(), third.Callback());
  ASSERT_TRUE(third.done.HasBeenNotified());
  EXPECT_EQ(**third.result, 9);
}

TEST(SyncTokenQueueTest, TimeoutThenTokenGoesToNextDequeue) {
  SyncTokenQueue q("q", std::make_shared<DeadlineTimer>());
  DequeueResult timed_out, next;
  q.Dequeue(absl::Milliseconds(20), timed_out.Callback());
  ASSERT_TRUE(timed_out.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_EQ(timed_out.result->status().code(), absl::StatusCode::kDeadlineExceeded);
  q.Dequeue(absl::ZeroDuration(), next.Callback());
  q.Enqueue({3});
  ASSERT_TRUE(next.done.HasBeenNotified());
  EXPECT_EQ(**next.result, 3);
  EXPECT_EQ(q.size(), 0u);
}

TEST(SyncTokenQueueTest, DestroyingAbortsWaitingDequeues) {
  DequeueResult r;
  {
    SyncTokenQueue q("q", nullptr);
    q.Dequeue(absl::ZeroDuration(), r.Callback());
  }
  ASSERT_TRUE(r.done.HasBeenNotified());
  EXPECT_EQ(r.result->status().code(), absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace internal
}  // namespace sluice
