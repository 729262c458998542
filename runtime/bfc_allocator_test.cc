#include "runtime/bfc_allocator.h"

#include <atomic>
#include <functional>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace sluice {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

// What a CountingSubAllocator saw; shared with the test after the allocator
// takes ownership of the SubAllocator.
struct SubLog {
  int attempts = 0;
  int allocs = 0;
  int frees = 0;
  int64_t live = 0;
  int64_t capacity = 0;  // 0: unlimited
  std::vector<size_t> sizes;
};

class CountingSubAllocator : public SubAllocator {
 public:
  explicit CountingSubAllocator(std::shared_ptr<SubLog> log) : log_(std::move(log)) {}
  void* Alloc(size_t bytes) override {
    ++log_->attempts;
    if (log_->capacity > 0 && log_->live + static_cast<int64_t>(bytes) > log_->capacity) {
      return nullptr;
    }
    void* p = host_.Alloc(bytes);
    if (p == nullptr) return nullptr;
    ++log_->allocs;
    log_->live += static_cast<int64_t>(bytes);
    log_->sizes.push_back(bytes);
    return p;
  }
  void Free(void* ptr, size_t bytes) override {
    ++log_->frees;
    log_->live -= static_cast<int64_t>(bytes);
    host_.Free(ptr, bytes);
  }
  MemoryKind memory_kind() const override { return MemoryKind::kHost; }

 private:
  std::shared_ptr<SubLog> log_;
  HostSubAllocator host_;
};

std::unique_ptr<BfcAllocator> Make(std::shared_ptr<SubLog> log, int64_t initial,
                                   int64_t limit = 0,
                                   std::function<bool()> may_release_regions = nullptr) {
  BfcAllocator::Options options;
  options.name = "test_bfc";
  options.initial_region_bytes = initial;
  options.memory_limit = limit;
  options.may_release_regions = std::move(may_release_regions);
  return std::make_unique<BfcAllocator>(std::make_unique<CountingSubAllocator>(log),
                                        std::move(options));
}

char* Alloc(BfcAllocator& a, size_t bytes) {
  return static_cast<char*>(a.AllocateRaw(kTensorAlignment, bytes));
}

TEST(BfcAllocatorTest, FreedBlockIsReused) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB);
  char* p = Alloc(*a, 1000);
  ASSERT_NE(p, nullptr);
  a->DeallocateRaw(p, 1000);
  EXPECT_EQ(Alloc(*a, 1000), p);
  EXPECT_EQ(log->allocs, 1);
  EXPECT_EQ(a->memory_kind(), MemoryKind::kHost);
  EXPECT_EQ(a->Name(), "test_bfc");
}

TEST(BfcAllocatorTest, ZeroBytesGetsAValidBlock) {
  auto a = Make(std::make_shared<SubLog>(), kMiB);
  char* p = Alloc(*a, 0);
  char* q = Alloc(*a, 0);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(q, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(q - p, 256);
  EXPECT_EQ(a->GetStats().bytes_in_use, 512);
  a->DeallocateRaw(p, 0);
  a->DeallocateRaw(q, 0);
  EXPECT_EQ(a->GetStats().bytes_in_use, 0);
}

TEST(BfcAllocatorTest, EveryPointerIs256Aligned) {
  auto a = Make(std::make_shared<SubLog>(), 64 * kKiB);
  std::mt19937 rng(7);
  const size_t alignments[] = {0, 1, 8, 64, 128, 256};
  std::vector<void*> live;
  for (int i = 0; i < 300; ++i) {
    size_t bytes = rng() % 50000;
    void* p = a->AllocateRaw(alignments[i % 6], bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u) << "request " << bytes;
    live.push_back(p);
    if (rng() % 3 == 0) {
      a->DeallocateRaw(live[rng() % live.size()], 0);
    }
  }
  // Beyond 256, or not a power of two: refused, not an OOM.
  EXPECT_EQ(a->AllocateRaw(512, 100), nullptr);
  EXPECT_EQ(a->AllocateRaw(48, 100), nullptr);
  EXPECT_EQ(a->GetStats().num_ooms, 0);
  for (void* p : live) a->DeallocateRaw(p, 0);  // repeats are ignored
  EXPECT_EQ(a->GetStats().bytes_in_use, 0);
}

TEST(BfcAllocatorTest, SplitsAndReusesTheRemainder) {
  auto a = Make(std::make_shared<SubLog>(), kMiB);
  char* p = Alloc(*a, 1024);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(a->GetStats().largest_free_block, static_cast<int64_t>(kMiB - 1024));
  EXPECT_EQ(Alloc(*a, 1000), p + 1024);  // the split-off rest, right behind

  char* hole = Alloc(*a, 4096);
  char* guard = Alloc(*a, 256);
  ASSERT_EQ(guard, hole + 4096);
  a->DeallocateRaw(hole, 4096);
  char* x = Alloc(*a, 1024);
  EXPECT_EQ(x, hole);
  // The hole's 3072-byte remainder is the best fit, ahead of the big tail.
  EXPECT_EQ(Alloc(*a, 3072), hole + 1024);
  EXPECT_EQ(Alloc(*a, 256), guard + 256);
  EXPECT_EQ(a->GetStats().bytes_in_use, 1024 + 1024 + 4096 + 256 + 256);
}

TEST(BfcAllocatorTest, CoalescesWithBothNeighbours) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB);
  char* pa = Alloc(*a, 1024);
  char* pb = Alloc(*a, 2048);
  char* pc = Alloc(*a, 512);
  ASSERT_EQ(pb, pa + 1024);
  ASSERT_EQ(pc, pb + 2048);
  const int64_t reserved = a->GetStats().bytes_reserved;
  a->DeallocateRaw(pa, 1024);
  a->DeallocateRaw(pb, 2048);  // merges with the free block before it
  EXPECT_EQ(Alloc(*a, 3072), pa);
  EXPECT_EQ(a->GetStats().bytes_reserved, reserved);
  EXPECT_EQ(log->allocs, 1);

  // Free the middle last: it merges with free blocks on both sides.
  char* x = Alloc(*a, 512);
  char* y = Alloc(*a, 768);
  char* z = Alloc(*a, 1280);
  char* guard = Alloc(*a, 256);
  ASSERT_EQ(y, x + 512);
  ASSERT_EQ(z, y + 768);
  a->DeallocateRaw(x, 0);
  a->DeallocateRaw(z, 0);
  a->DeallocateRaw(y, 0);
  EXPECT_EQ(Alloc(*a, 512 + 768 + 1280), x);

  // Freeing everything leaves the region as one block again.
  for (char* p : {pa, pc, x, guard}) a->DeallocateRaw(p, 0);
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.largest_free_block, static_cast<int64_t>(kMiB));
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(kMiB));
}

TEST(BfcAllocatorTest, BestFitAcrossAndWithinBins) {
  auto a = Make(std::make_shared<SubLog>(), kMiB);
  // Holes in different bins: a 4 KiB hole at a lower address, a 2 KiB one later.
  char* big = Alloc(*a, 4096);
  Alloc(*a, 256);
  char* small = Alloc(*a, 2048);
  Alloc(*a, 256);
  a->DeallocateRaw(big, 0);
  a->DeallocateRaw(small, 0);
  EXPECT_EQ(Alloc(*a, 1536), small);
  EXPECT_EQ(Alloc(*a, 3000), big);

  // Holes in the same bin [2048, 4096): 3072 first, 2560 later. (A fresh
  // allocator: the guards above would land in the leftover holes.)
  a = Make(std::make_shared<SubLog>(), kMiB);
  char* h1 = Alloc(*a, 3072);
  Alloc(*a, 256);
  char* h2 = Alloc(*a, 2560);
  Alloc(*a, 256);
  a->DeallocateRaw(h1, 0);
  a->DeallocateRaw(h2, 0);
  EXPECT_EQ(Alloc(*a, 2304), h2);
  EXPECT_EQ(Alloc(*a, 2304), h1);

  // Equal holes: the lower address wins, whatever the order of the frees.
  a = Make(std::make_shared<SubLog>(), kMiB);
  char* e1 = Alloc(*a, 1024);
  Alloc(*a, 256);
  char* e2 = Alloc(*a, 1024);
  Alloc(*a, 256);
  a->DeallocateRaw(e2, 0);
  a->DeallocateRaw(e1, 0);
  EXPECT_EQ(Alloc(*a, 1024), e1);
  EXPECT_EQ(Alloc(*a, 1024), e2);
}

TEST(BfcAllocatorTest, RegionsGrowByDoubling) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB);
  ASSERT_NE(Alloc(*a, kMiB), nullptr);       // fills region 1 exactly
  ASSERT_NE(Alloc(*a, 256), nullptr);        // region 2: 2 MiB
  ASSERT_NE(Alloc(*a, 2 * kMiB), nullptr);   // region 3: 4 MiB
  ASSERT_NE(Alloc(*a, 20 * kMiB), nullptr);  // at least the request: 20 MiB
  ASSERT_NE(Alloc(*a, kMiB), nullptr);       // fits in region 3
  EXPECT_EQ(log->sizes, (std::vector<size_t>{kMiB, 2 * kMiB, 4 * kMiB, 20 * kMiB}));
  EXPECT_EQ(a->GetStats().bytes_reserved, static_cast<int64_t>(27 * kMiB));
  ASSERT_NE(Alloc(*a, 5 * kMiB), nullptr);  // doubles the last: 40 MiB
  EXPECT_EQ(log->sizes.back(), 40 * kMiB);

  // A first request above the initial size gets its own size.
  auto log2 = std::make_shared<SubLog>();
  auto b = Make(log2, kMiB);
  ASSERT_NE(Alloc(*b, 3 * kMiB + 1), nullptr);
  ASSERT_NE(Alloc(*b, 256), nullptr);
  EXPECT_EQ(log2->sizes, (std::vector<size_t>{3 * kMiB + 256, 6 * kMiB + 512}));
}

TEST(BfcAllocatorTest, MemoryLimitGivesNullptrAndRecovers) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB, 3 * kMiB);
  char* p1 = Alloc(*a, kMiB);
  char* p2 = Alloc(*a, kMiB);
  char* p3 = Alloc(*a, kMiB);
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  ASSERT_NE(p3, nullptr);
  EXPECT_EQ(Alloc(*a, kMiB), nullptr);
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_ooms, 1);
  EXPECT_EQ(s.bytes_limit, static_cast<int64_t>(3 * kMiB));
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(3 * kMiB));
  EXPECT_EQ(log->sizes, (std::vector<size_t>{kMiB, 2 * kMiB}));
  a->DeallocateRaw(p2, kMiB);
  EXPECT_EQ(Alloc(*a, kMiB), p2);
  EXPECT_EQ(a->GetStats().num_ooms, 1);
  EXPECT_EQ(Alloc(*a, std::numeric_limits<size_t>::max()), nullptr);
  EXPECT_EQ(a->GetStats().num_ooms, 2);
}

TEST(BfcAllocatorTest, GrowthFallsBackToWhatIsNeededUnderTheLimit) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB, 2 * kMiB + 512 * kKiB);
  ASSERT_NE(Alloc(*a, kMiB), nullptr);
  ASSERT_NE(Alloc(*a, 512 * kKiB), nullptr);  // 2 MiB would pass the limit
  ASSERT_NE(Alloc(*a, kMiB), nullptr);
  EXPECT_EQ(log->sizes, (std::vector<size_t>{kMiB, 512 * kKiB, kMiB}));
  EXPECT_EQ(Alloc(*a, 0), nullptr);
  EXPECT_EQ(a->GetStats().num_ooms, 1);
}

TEST(BfcAllocatorTest, ReleasesFreeRegionsBeforeFailing) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB, 4 * kMiB);
  char* p1 = Alloc(*a, kMiB);  // region 1: 1 MiB
  char* p2 = Alloc(*a, kMiB);  // region 2: 2 MiB
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  a->DeallocateRaw(p1, kMiB);
  // 1 MiB free in each region, 1 MiB left under the limit: only giving
  // region 1 back makes room for a 2 MiB region.
  char* big = Alloc(*a, 2 * kMiB);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(log->frees, 1);
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(log->live, static_cast<int64_t>(4 * kMiB));
}

// While Options::may_release_regions says no (a GPU recording a step), no
// region goes back, not even to make room: the allocation that would need
// it fails; once it says yes, the same allocation releases and succeeds.
TEST(BfcAllocatorTest, NoRegionGoesBackWhileReleasesAreRefused) {
  auto log = std::make_shared<SubLog>();
  auto may_release = std::make_shared<std::atomic<bool>>(true);
  auto a = Make(log, kMiB, 4 * kMiB, [may_release] { return may_release->load(); });
  char* p1 = Alloc(*a, kMiB);  // region 1: 1 MiB
  char* p2 = Alloc(*a, kMiB);  // region 2: 2 MiB
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  a->DeallocateRaw(p1, kMiB);
  *may_release = false;
  EXPECT_EQ(Alloc(*a, 2 * kMiB), nullptr);
  a->ReleaseFreeRegions();
  EXPECT_EQ(log->frees, 0);
  EXPECT_EQ(a->GetStats().num_ooms, 1);
  *may_release = true;
  char* big = Alloc(*a, 2 * kMiB);
  EXPECT_NE(big, nullptr);
  EXPECT_EQ(log->frees, 1);
}

TEST(BfcAllocatorTest, SubAllocatorFailureIsAnOom) {
  auto log = std::make_shared<SubLog>();
  log->capacity = 3 * kMiB;
  auto a = Make(log, kMiB);
  char* p1 = Alloc(*a, kMiB);
  char* p2 = Alloc(*a, kMiB);
  char* p3 = Alloc(*a, kMiB);
  ASSERT_NE(p3, nullptr);
  EXPECT_EQ(log->attempts, 2);
  EXPECT_EQ(Alloc(*a, kMiB), nullptr);
  // 4 MiB, then exactly 1 MiB; nothing to release; both once more.
  EXPECT_EQ(log->attempts, 6);
  EXPECT_EQ(a->GetStats().num_ooms, 1);
  a->DeallocateRaw(p3, kMiB);
  EXPECT_EQ(Alloc(*a, kMiB), p3);
  a->DeallocateRaw(p1, 0);
  a->DeallocateRaw(p2, 0);
}

TEST(BfcAllocatorTest, ReleaseFreeRegionsReturnsOnlyUnusedRegions) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, kMiB);
  char* p1 = Alloc(*a, kMiB);
  char* p2 = Alloc(*a, 2 * kMiB);
  char* p3 = Alloc(*a, 4 * kMiB);
  ASSERT_EQ(log->allocs, 3);
  a->DeallocateRaw(p1, 0);
  a->DeallocateRaw(p3, 0);
  a->ReleaseFreeRegions();
  EXPECT_EQ(log->frees, 2);
  EXPECT_EQ(log->live, static_cast<int64_t>(2 * kMiB));
  EXPECT_EQ(a->GetStats().bytes_reserved, static_cast<int64_t>(2 * kMiB));
  a->DeallocateRaw(p2, 0);
  a->ReleaseFreeRegions();
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(log->live, 0);
  EXPECT_EQ(s.bytes_reserved, 0);
  EXPECT_EQ(s.largest_free_block, 0);
  EXPECT_NE(Alloc(*a, 100), nullptr);  // grows again
  EXPECT_GT(a->GetStats().bytes_reserved, 0);
}

TEST(BfcAllocatorTest, DestructorReturnsEveryRegion) {
  auto log = std::make_shared<SubLog>();
  {
    auto a = Make(log, 64 * kKiB);
    for (int i = 0; i < 20; ++i) ASSERT_NE(Alloc(*a, 50 * kKiB), nullptr);
    EXPECT_GT(log->live, 0);
  }
  EXPECT_EQ(log->live, 0);
  EXPECT_EQ(log->frees, log->allocs);
}

TEST(BfcAllocatorTest, OnAllocateSeesEveryBlockWithItsRoundedSize) {
  std::vector<std::pair<void*, size_t>> seen;
  BfcAllocator::Options options;
  options.initial_region_bytes = kMiB;
  options.memory_limit = kMiB;
  options.on_allocate = [&seen](void* p, size_t n) {
    std::memset(p, 0xFF, n);  // the hook may write the whole block
    seen.emplace_back(p, n);
  };
  BfcAllocator a(std::make_unique<HostSubAllocator>(), options);
  void* p1 = a.AllocateRaw(64, 1);
  void* p2 = a.AllocateRaw(64, 1000);
  void* p3 = a.AllocateRaw(64, 0);
  void* p4 = a.AllocateRaw(64, 256);
  EXPECT_EQ(a.AllocateRaw(64, 2 * kMiB), nullptr);  // no hook for a failure
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], std::make_pair(p1, size_t{256}));
  EXPECT_EQ(seen[1], std::make_pair(p2, size_t{1024}));
  EXPECT_EQ(seen[2], std::make_pair(p3, size_t{256}));
  EXPECT_EQ(seen[3], std::make_pair(p4, size_t{256}));
}

TEST(BfcAllocatorTest, StatsTrackInUseAndPeak) {
  auto a = Make(std::make_shared<SubLog>(), kMiB, 8 * kMiB);
  char* p = Alloc(*a, 1000);
  char* q = Alloc(*a, 3000);
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.bytes_in_use, 4096);
  EXPECT_EQ(s.peak_bytes_in_use, 4096);
  EXPECT_EQ(s.largest_alloc_size, 3072);
  EXPECT_EQ(s.bytes_limit, static_cast<int64_t>(8 * kMiB));
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(kMiB));
  EXPECT_EQ(s.largest_free_block, static_cast<int64_t>(kMiB - 4096));
  a->DeallocateRaw(q, 3000);
  s = a->GetStats();
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.peak_bytes_in_use, 4096);
  a->ResetPeakForTesting();
  EXPECT_EQ(a->GetStats().peak_bytes_in_use, 1024);
  a->DeallocateRaw(p, 1000);
  EXPECT_EQ(a->GetStats().bytes_in_use, 0);
  EXPECT_EQ(a->GetStats().num_allocs, 2);
}

TEST(BfcAllocatorTest, NullAndUnknownPointersAreIgnored) {
  auto a = Make(std::make_shared<SubLog>(), kMiB);
  char* p = Alloc(*a, 1024);
  char* q = Alloc(*a, 1024);
  int on_stack = 0;
  a->DeallocateRaw(nullptr, 10);
  a->DeallocateRaw(p + 256, 768);  // inside a block, not its start
  a->DeallocateRaw(&on_stack, sizeof(on_stack));
  EXPECT_EQ(a->GetStats().bytes_in_use, 2048);
  a->DeallocateRaw(p, 1024);
  a->DeallocateRaw(p, 1024);  // a second free is ignored too
  EXPECT_EQ(a->GetStats().bytes_in_use, 1024);
  char* r = Alloc(*a, 512);
  char* s = Alloc(*a, 512);
  EXPECT_EQ(r, p);
  EXPECT_EQ(s, p + 512);
  EXPECT_NE(Alloc(*a, 256), q);
}

TEST(BfcAllocatorTest, DebugStringDescribesRegionsBinsAndBlocks) {
  auto a = Make(std::make_shared<SubLog>(), kMiB);
  char* p = Alloc(*a, 1000);
  std::string text = a->DebugString();
  EXPECT_NE(text.find("test_bfc"), std::string::npos) << text;
  EXPECT_NE(text.find(absl::StrFormat("region [%p, %p) %d bytes", static_cast<void*>(p),
                                      static_cast<void*>(p + kMiB), kMiB)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1024 bytes in use in 1 blocks"), std::string::npos) << text;
  EXPECT_NE(text.find("bin 11 [524288, 1048576): 1 free blocks, 1047552 bytes"),
            std::string::npos)
      << text;
  a->DeallocateRaw(p, 1000);
}

// Random single-threaded use checked against a model of the live blocks:
// no two blocks overlap, stats agree, and freeing all leaves whole regions.
TEST(BfcAllocatorTest, RandomUseKeepsBlocksDisjoint) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, 128 * kKiB);
  std::mt19937 rng(42);
  std::map<uintptr_t, size_t> live;  // address -> rounded size
  int64_t in_use = 0;
  for (int i = 0; i < 5000; ++i) {
    if (live.empty() || rng() % 2 == 0) {
      size_t bytes = rng() % (size_t{1} << (rng() % 17));
      char* p = Alloc(*a, bytes);
      ASSERT_NE(p, nullptr);
      size_t rounded = bytes == 0 ? 256 : (bytes + 255) / 256 * 256;
      uintptr_t at = reinterpret_cast<uintptr_t>(p);
      auto next = live.lower_bound(at);
      if (next != live.end()) {
        ASSERT_LE(at + rounded, next->first);
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, at);
      }
      live[at] = rounded;
      in_use += static_cast<int64_t>(rounded);
    } else {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      a->DeallocateRaw(reinterpret_cast<void*>(it->first), 0);
      in_use -= static_cast<int64_t>(it->second);
      live.erase(it);
    }
    ASSERT_EQ(a->GetStats().bytes_in_use, in_use);
  }
  for (auto& [at, size] : live) a->DeallocateRaw(reinterpret_cast<void*>(at), size);
  a->ReleaseFreeRegions();  // every region coalesced back into one block
  EXPECT_EQ(a->GetStats().bytes_reserved, 0);
  EXPECT_EQ(log->live, 0);
}

// Threads allocate, fill each block with its own id, and check the fill
// before freeing: an overlap between live blocks shows as a wrong word.
TEST(BfcAllocatorTest, ThreadsNeverShareBytes) {
  auto log = std::make_shared<SubLog>();
  auto a = Make(log, 256 * kKiB);
  constexpr int kThreads = 4;
  constexpr int kOps = 10000;
  std::vector<int> errors(kThreads, 0);
  std::vector<int> allocs(kThreads, 0);
  auto work = [&](int t) {
    std::mt19937 rng(1000 + t);
    struct Live {
      char* p;
      size_t bytes;
      uint64_t id;
    };
    std::vector<Live> live;
    auto fill = [](const Live& b) {
      for (size_t i = 0; i + 8 <= b.bytes; i += 8) std::memcpy(b.p + i, &b.id, 8);
      std::memset(b.p + b.bytes / 8 * 8, static_cast<int>(b.id & 0xFF), b.bytes % 8);
    };
    auto intact = [](const Live& b) {
      for (size_t i = 0; i + 8 <= b.bytes; i += 8) {
        if (std::memcmp(b.p + i, &b.id, 8) != 0) return false;
      }
      for (size_t i = b.bytes / 8 * 8; i < b.bytes; ++i) {
        if (static_cast<unsigned char>(b.p[i]) != (b.id & 0xFF)) return false;
      }
      return true;
    };
    for (int i = 0; i < kOps; ++i) {
      if (live.empty() || (live.size() < 200 && rng() % 2 == 0)) {
        size_t bytes = 1 + rng() % (size_t{1} << (rng() % 15));
        Live b{Alloc(*a, bytes), bytes, (uint64_t{static_cast<uint32_t>(t)} << 32) | i};
        if (b.p == nullptr) {
          ++errors[t];
          continue;
        }
        ++allocs[t];
        fill(b);
        live.push_back(b);
      } else {
        size_t k = rng() % live.size();
        if (!intact(live[k])) ++errors[t];
        a->DeallocateRaw(live[k].p, live[k].bytes);
        live[k] = live.back();
        live.pop_back();
      }
      if (i % 1000 == 0) a->GetStats();
    }
    for (const Live& b : live) {
      if (!intact(b)) ++errors[t];
      a->DeallocateRaw(b.p, b.bytes);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& th : threads) th.join();
  int64_t total_allocs = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], 0) << "thread " << t;
    total_allocs += allocs[t];
  }
  AllocatorStats s = a->GetStats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, total_allocs);
  EXPECT_EQ(s.num_ooms, 0);
  EXPECT_GT(s.peak_bytes_in_use, 0);
  a->ReleaseFreeRegions();
  EXPECT_EQ(a->GetStats().bytes_reserved, 0);
  EXPECT_EQ(log->live, 0);
}

}  // namespace
}  // namespace sluice
