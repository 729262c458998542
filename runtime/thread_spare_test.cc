#include "runtime/thread_spare.h"

#include <atomic>
#include <cstdlib>
#include <thread>

#include "gtest/gtest.h"

namespace sluice {
namespace {

std::atomic<int> g_freed{0};

struct CountedBlock {
  static void Free(void* p) {
    ++g_freed;
    std::free(p);
  }
};

TEST(ThreadSpareTest, KeepsOneBlockForTheNextTake) {
  using Spare = ThreadSpare<CountedBlock>;
  EXPECT_EQ(Spare::Take(), nullptr);
  void* a = std::malloc(16);
  void* b = std::malloc(16);
  EXPECT_TRUE(Spare::Keep(a));
  EXPECT_FALSE(Spare::Keep(b));  // one already: the caller frees it
  std::free(b);
  EXPECT_EQ(Spare::Take(), a);
  EXPECT_EQ(Spare::Take(), nullptr);
  std::free(a);
}

TEST(ThreadSpareTest, EachThreadHasItsOwnAndFreesItAtExit) {
  using Spare = ThreadSpare<CountedBlock>;
  void* mine = std::malloc(16);
  ASSERT_TRUE(Spare::Keep(mine));
  const int freed_before = g_freed.load();
  void* taken_there = reinterpret_cast<void*>(1);
  std::thread other([&] {
    taken_there = Spare::Take();  // not this thread's block
    EXPECT_TRUE(Spare::Keep(std::malloc(16)));
  });
  other.join();
  EXPECT_EQ(taken_there, nullptr);
  EXPECT_EQ(g_freed.load(), freed_before + 1);  // the other thread's spare, at its exit
  EXPECT_EQ(Spare::Take(), mine);
  std::free(mine);
}

}  // namespace
}  // namespace sluice
