#include "runtime/thread_pool.h"

#include <atomic>

#include "absl/synchronization/blocking_counter.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

TEST(ThreadPoolTest, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool("t", 2);
  std::vector<std::atomic<int>> hits(10007);
  pool.ParallelFor(hits.size(), 100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPoolTest, ParallelForFromEveryPoolThreadDoesNotDeadlock) {
  ThreadPool pool("t", 2);
  absl::BlockingCounter done(4);
  std::atomic<int64_t> sum{0};
  for (int k = 0; k < 4; ++k) {
    pool.Schedule([&] {
      pool.ParallelFor(1000, 10, [&](int64_t b, int64_t e) { sum += e - b; });
      done.DecrementCount();
    });
  }
  done.Wait();
  EXPECT_EQ(sum.load(), 4000);
}

TEST(ThreadPoolTest, DestructorDrainsTheQueue) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool("t", 1);
    for (int i = 0; i < 100; ++i) pool.Schedule([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 100);
}

}  // namespace
}  // namespace sluice
