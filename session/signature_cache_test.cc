// SignatureCache: one build per key however many callers race for it,
// errors not cached, Clear/Erase hand entries back, Close refuses later
// builds, and an entry outlives its erasure for whoever holds it.
#include "session/signature_cache.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace sluice {
namespace {

struct Entry {
  int value = 0;
};

absl::StatusOr<std::shared_ptr<Entry>> Make(int value, std::atomic<int>* builds) {
  builds->fetch_add(1);
  auto e = std::make_shared<Entry>();
  e->value = value;
  return e;
}

TEST(SignatureCacheTest, BuildsOncePerKeyAndSharesTheEntry) {
  SignatureCache<Entry> cache;
  std::atomic<int> builds{0};
  auto a = cache.GetOrBuild("k", [&]() { return Make(7, &builds); });
  auto b = cache.GetOrBuild("k", [&]() { return Make(8, &builds); });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*b)->value, 7);
  auto c = cache.GetOrBuild("other", [&]() { return Make(9, &builds); });
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(builds.load(), 2);
  EXPECT_EQ((*c)->value, 9);
}

TEST(SignatureCacheTest, ConcurrentFirstCallsBuildOnce) {
  SignatureCache<Entry> cache;
  std::atomic<int> builds{0};
  std::vector<std::thread> threads;
  std::vector<Entry*> seen(8, nullptr);
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i]() {
      auto e = cache.GetOrBuild("k", [&]() {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // widen the race
        return Make(i, &builds);
      });
      if (e.ok()) seen[i] = e->get();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(builds.load(), 1);
  for (Entry* e : seen) EXPECT_EQ(e, seen[0]);
}

TEST(SignatureCacheTest, AnErrorIsReturnedAndNotCached) {
  SignatureCache<Entry> cache;
  std::atomic<int> builds{0};
  auto failed = cache.GetOrBuild("k", [&]() -> absl::StatusOr<std::shared_ptr<Entry>> {
    builds.fetch_add(1);
    return absl::InvalidArgumentError("no such node 'x'");
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "no such node 'x'");
  auto built = cache.GetOrBuild("k", [&]() { return Make(3, &builds); });
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(builds.load(), 2);
  EXPECT_EQ((*built)->value, 3);
}

TEST(SignatureCacheTest, EraseAndClearHandEntriesBackAndForceARebuild) {
  SignatureCache<Entry> cache;
  std::atomic<int> builds{0};
  std::shared_ptr<Entry> held = *cache.GetOrBuild("a", [&]() { return Make(1, &builds); });
  ASSERT_TRUE(cache.GetOrBuild("b", [&]() { return Make(2, &builds); }).ok());

  std::shared_ptr<Entry> erased = cache.Erase("a");
  EXPECT_EQ(erased.get(), held.get());
  EXPECT_EQ(cache.Erase("a"), nullptr);   // already gone
  EXPECT_EQ(cache.Erase("zz"), nullptr);  // never there
  EXPECT_EQ(held->value, 1);              // still usable by whoever holds it

  std::vector<std::shared_ptr<Entry>> cleared = cache.Clear();
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0]->value, 2);
  ASSERT_TRUE(cache.GetOrBuild("b", [&]() { return Make(20, &builds); }).ok());
  EXPECT_EQ(builds.load(), 3);
}

TEST(SignatureCacheTest, CloseReturnsEntriesOnceAndRefusesLaterBuilds) {
  SignatureCache<Entry> cache;
  std::atomic<int> builds{0};
  ASSERT_TRUE(cache.GetOrBuild("a", [&]() { return Make(1, &builds); }).ok());
  EXPECT_FALSE(cache.closed());
  std::vector<std::shared_ptr<Entry>> gone;
  EXPECT_TRUE(cache.Close(&gone));
  EXPECT_EQ(gone.size(), 1u);
  EXPECT_TRUE(cache.closed());
  EXPECT_FALSE(cache.Close(&gone));  // a second Close does nothing
  auto after = cache.GetOrBuild("a", [&]() { return Make(5, &builds); });
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.status().message(), "session is closed");
  EXPECT_EQ(builds.load(), 1);
}

}  // namespace
}  // namespace sluice
