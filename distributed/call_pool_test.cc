// CallPool: every call runs, calls that block on each other never deadlock
// (a blocked call never delays another), idle threads are reused, and the
// destructor waits for running calls.
#include "distributed/call_pool.h"

#include <atomic>
#include <set>
#include <thread>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(CallPoolTest, RunsEveryCall) {
  std::atomic<int> ran{0};
  absl::BlockingCounter done(200);
  CallPool pool("test", /*max_idle=*/4);
  for (int i = 0; i < 200; ++i) {
    pool.Schedule([&] {
      ran.fetch_add(1);
      done.DecrementCount();
    });
  }
  done.Wait();
  EXPECT_EQ(ran.load(), 200);
}

// 16 calls that each wait until all 16 have started: a pool that queued a
// call behind a blocked one would hang here.
TEST(CallPoolTest, BlockedCallsNeverDelayOthers) {
  constexpr int kCalls = 16;
  CallPool pool("test", /*max_idle=*/1);
  absl::Mutex mu;
  int started = 0;
  absl::BlockingCounter finished(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    pool.Schedule([&] {
      absl::MutexLock lock(&mu);
      ++started;
      const bool all = mu.AwaitWithTimeout(
          absl::Condition(+[](int* n) { return *n == kCalls; }, &started), absl::Seconds(10));
      EXPECT_TRUE(all) << "only " << started << " calls started";
      finished.DecrementCount();
    });
  }
  finished.Wait();
}

TEST(CallPoolTest, ReusesIdleThreads) {
  CallPool pool("test", /*max_idle=*/2);
  std::set<std::thread::id> ids;
  for (int i = 0; i < 20; ++i) {
    absl::Notification done;
    std::thread::id id;
    pool.Schedule([&] {
      id = std::this_thread::get_id();
      done.Notify();
    });
    done.WaitForNotification();
    ids.insert(id);
    absl::SleepFor(absl::Milliseconds(5));  // let the thread go idle again
  }
  EXPECT_LE(ids.size(), 2u);
}

// A step's burst of blocking calls (a ps receiving 20 gradients at once)
// leaves its threads idle for the next step's burst: the second starts none.
TEST(CallPoolTest, ARepeatedBurstStartsNoThreads) {
  constexpr int kCalls = 20;
  CallPool pool("test");  // the default max_idle
  for (int burst = 0; burst < 2; ++burst) {
    absl::Mutex mu;
    int started = 0;
    absl::BlockingCounter done(kCalls);
    for (int i = 0; i < kCalls; ++i) {
      pool.Schedule([&] {
        absl::MutexLock lock(&mu);
        ++started;
        // Every call holds its thread until all have started.
        mu.Await(absl::Condition(+[](int* n) { return *n == kCalls; }, &started));
        done.DecrementCount();
      });
    }
    done.Wait();
    absl::SleepFor(absl::Milliseconds(20));  // the threads go back to idle
    EXPECT_EQ(pool.ThreadsStartedForTesting(), kCalls) << "burst " << burst;
  }
}

TEST(CallPoolTest, DestructorWaitsForRunningCalls) {
  std::atomic<int> finished{0};
  {
    CallPool pool("test", /*max_idle=*/0);
    for (int i = 0; i < 4; ++i) {
      pool.Schedule([&] {
        absl::SleepFor(absl::Milliseconds(100));
        finished.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(finished.load(), 4);
}

TEST(CallPoolTest, CallsMayScheduleCalls) {
  CallPool pool("test", /*max_idle=*/2);
  absl::Notification inner_done;
  pool.Schedule([&] {
    absl::Notification inner_started;
    pool.Schedule([&] {
      inner_started.Notify();
      inner_done.Notify();
    });
    // The outer call blocks until the inner one runs on another thread.
    EXPECT_TRUE(inner_started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  });
  EXPECT_TRUE(inner_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

}  // namespace
}  // namespace sluice
