#include "distributed/rpc/recv_buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

TEST(RecvBufferPoolTest, ReusesFreedLargeBlocksOfTheSameSize) {
  auto pool = std::make_shared<RecvBufferPool>(64 << 20);
  void* a = pool->AllocateRaw(64, 3 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % (2 << 20), 0u);  // huge-page aligned
  std::memset(a, 1, 3 << 20);
  pool->DeallocateRaw(a, 3 << 20);
  EXPECT_EQ(pool->cached_bytes(), 4 << 20);  // rounded up to 2 MiB pages
  void* b = pool->AllocateRaw(64, (3 << 20) + 100);  // same 4 MiB block size
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool->reuses(), 1);
  EXPECT_EQ(pool->cached_bytes(), 0);
  void* c = pool->AllocateRaw(64, 6 << 20);  // another size: a new block
  EXPECT_NE(c, a);
  pool->DeallocateRaw(b, (3 << 20) + 100);
  pool->DeallocateRaw(c, 6 << 20);
  EXPECT_EQ(pool->cached_bytes(), 10 << 20);
  AllocatorStats s = pool->GetStats();
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.largest_alloc_size, 6 << 20);
}

TEST(RecvBufferPoolTest, KeepsAtMostTheLimitAndNoSmallBlocks) {
  auto pool = std::make_shared<RecvBufferPool>(4 << 20);
  void* a = pool->AllocateRaw(64, 4 << 20);
  void* b = pool->AllocateRaw(64, 4 << 20);
  pool->DeallocateRaw(a, 4 << 20);
  pool->DeallocateRaw(b, 4 << 20);  // over the limit: freed
  EXPECT_EQ(pool->cached_bytes(), 4 << 20);
  void* small = pool->AllocateRaw(64, 1000);
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  pool->DeallocateRaw(small, 1000);
  EXPECT_EQ(pool->cached_bytes(), 4 << 20);
  EXPECT_EQ(pool->AllocateRaw(4 << 20, 8 << 20), nullptr);  // alignment over 2 MiB
}

TEST(RecvBufferPoolTest, SmallBlocksHaveTheirAlignmentAndAreWritable) {
  auto pool = std::make_shared<RecvBufferPool>(1 << 20);
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t alignment : {size_t{1}, size_t{8}, size_t{64}, size_t{4096}, size_t{2} << 20}) {
    for (size_t bytes : {size_t{0}, size_t{1}, size_t{4}, size_t{100}, size_t{200} << 10}) {
      void* p = pool->AllocateRaw(alignment, bytes);
      ASSERT_NE(p, nullptr) << alignment << " " << bytes;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u) << alignment << " " << bytes;
      std::memset(p, 0xab, bytes);
      blocks.emplace_back(p, bytes);
    }
  }
  EXPECT_EQ(pool->GetStats().bytes_in_use, 5 * (0 + 1 + 4 + 100 + (200 << 10)));
  for (auto [p, bytes] : blocks) pool->DeallocateRaw(p, bytes);
  EXPECT_EQ(pool->GetStats().bytes_in_use, 0);
  EXPECT_EQ(pool->cached_bytes(), 0);
}

// Each thread keeps one freed small block for its next small tensor, of any
// small size.
TEST(RecvBufferPoolTest, TheLastFreedSmallBlockIsReused) {
  auto pool = std::make_shared<RecvBufferPool>(1 << 20);
  void* four = pool->AllocateRaw(kTensorAlignment, 4);
  void* other = pool->AllocateRaw(kTensorAlignment, 4);
  pool->DeallocateRaw(four, 4);
  pool->DeallocateRaw(other, 4);  // the spare is taken: freed
  void* full = pool->AllocateRaw(kTensorAlignment, RecvBufferPool::kSmallBlockBytes);
  EXPECT_EQ(full, four);
  std::memset(full, 0xcd, RecvBufferPool::kSmallBlockBytes);
  // A larger alignment than the spare's is not served from it.
  pool->DeallocateRaw(full, RecvBufferPool::kSmallBlockBytes);
  void* wide = pool->AllocateRaw(4096, 8);
  EXPECT_NE(wide, full);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 4096, 0u);
  EXPECT_EQ(pool->AllocateRaw(kTensorAlignment, 100), full);
  EXPECT_EQ(pool->GetStats().bytes_in_use, 8 + 100);
  pool->DeallocateRaw(wide, 8);  // kept as the spare; freed when the thread ends
  pool->DeallocateRaw(full, 100);
  EXPECT_EQ(pool->GetStats().bytes_in_use, 0);
  EXPECT_EQ(pool->cached_bytes(), 0);  // the spare is not counted among cached blocks
}

// A thread's spare small block is plain memory: it outlives the pool that
// made it and serves the next pool.
TEST(RecvBufferPoolTest, ASpareSmallBlockOutlivesItsPool) {
  std::thread([] {
    auto first = std::make_shared<RecvBufferPool>(1 << 20);
    void* p = first->AllocateRaw(kTensorAlignment, 4);
    first->DeallocateRaw(p, 4);
    first.reset();
    auto second = std::make_shared<RecvBufferPool>(1 << 20);
    void* q = second->AllocateRaw(kTensorAlignment, RecvBufferPool::kSmallBlockBytes);
    EXPECT_EQ(q, p);
    std::memset(q, 0x11, RecvBufferPool::kSmallBlockBytes);
    second->DeallocateRaw(q, RecvBufferPool::kSmallBlockBytes);  // freed when the thread ends
  }).join();
}

// Collective chunks of a little under 1 MiB (a segment cut into equal
// parts) share one 64 KiB-rounded class and are reused.
TEST(RecvBufferPoolTest, ReusesMidSizedBlocksOfNearSizes) {
  auto pool = std::make_shared<RecvBufferPool>(64 << 20);
  const size_t chunk = (1 << 20) - 4 * 1000;
  void* a = pool->AllocateRaw(64, chunk);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % (64 << 10), 0u);
  std::memset(a, 1, chunk);
  pool->DeallocateRaw(a, chunk);
  EXPECT_EQ(pool->cached_bytes(), 1 << 20);
  void* b = pool->AllocateRaw(64, chunk + 12);
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool->reuses(), 1);
  pool->DeallocateRaw(b, chunk + 12);
  void* small = pool->AllocateRaw(64, 100 << 10);  // under 256 KiB: not kept
  pool->DeallocateRaw(small, 100 << 10);
  EXPECT_EQ(pool->cached_bytes(), 1 << 20);
}

TEST(RecvBufferPoolTest, TensorsKeepThePoolAlive) {
  auto pool = std::make_shared<RecvBufferPool>();
  absl::StatusOr<Tensor> t = Tensor::Allocate(pool.get(), DT_FLOAT, TensorShape({1 << 20}));
  ASSERT_TRUE(t.ok());
  std::weak_ptr<RecvBufferPool> weak = pool;
  pool.reset();
  EXPECT_FALSE(weak.expired());
  t->flat<float>()[0] = 1;
  *t = Tensor();
  EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace sluice
