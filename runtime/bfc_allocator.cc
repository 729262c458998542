#include "runtime/bfc_allocator.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sluice {
namespace {

constexpr size_t kMaxSize = std::numeric_limits<size_t>::max();
// Blocks listed per region in DebugString before it summarizes the rest.
constexpr int kMaxBlocksShown = 32;

size_t RoundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

}  // namespace

// A run of bytes [ptr, ptr + size) in one region. Blocks of a region form a
// doubly linked list in address order that covers the region exactly.
struct BfcAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  bool in_use = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

struct BfcAllocator::Region {
  char* base = nullptr;
  size_t size = 0;
  Block* first = nullptr;
};

bool BfcAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->size != b->size) return a->size < b->size;
  return std::less<const char*>()(a->ptr, b->ptr);
}

void* HostSubAllocator::Alloc(size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  if (bytes > kMaxSize - (BfcAllocator::kMinBlock - 1)) return nullptr;
  size_t padded = RoundUp(std::max<size_t>(bytes, 1), BfcAllocator::kMinBlock);
  return std::aligned_alloc(BfcAllocator::kMinBlock, padded);
}

void HostSubAllocator::Free(void* ptr, size_t /*bytes*/) { std::free(ptr); }

BfcAllocator::BfcAllocator(std::unique_ptr<SubAllocator> sub, Options options)
    : sub_(std::move(sub)), options_(std::move(options)) {
  absl::MutexLock lock(&mu_);
  bins_.resize(kNumBins);
  stats_.bytes_limit = options_.memory_limit;
  size_t initial = options_.initial_region_bytes > 0
                       ? static_cast<size_t>(options_.initial_region_bytes)
                       : kMinBlock;
  next_region_bytes_ = RoundUp(std::min(initial, kMaxSize / 2), kMinBlock);
}

BfcAllocator::~BfcAllocator() {
  absl::MutexLock lock(&mu_);
  for (auto& region : regions_) {
    for (Block* b = region->first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    sub_->Free(region->base, region->size);
  }
  regions_.clear();
}

int BfcAllocator::BinFor(size_t bytes) {
  size_t units = std::max<size_t>(bytes / kMinBlock, 1);
  int bin = 63 - __builtin_clzll(static_cast<unsigned long long>(units));
  return std::min(bin, kNumBins - 1);
}

void BfcAllocator::InsertFree(Block* b) { bins_[BinFor(b->size)].insert(b); }

void BfcAllocator::RemoveFree(Block* b) { bins_[BinFor(b->size)].erase(b); }

void* BfcAllocator::AllocateRaw(size_t alignment, size_t bytes) {
  // Every block starts on a 256-byte boundary of a 256-aligned region, which
  // satisfies any power-of-two alignment up to 256 and nothing beyond.
  if (alignment > kMinBlock || (alignment & (alignment - 1)) != 0) return nullptr;
  void* ptr = nullptr;
  size_t rounded = 0;
  {
    absl::MutexLock lock(&mu_);
    if (bytes > kMaxSize - (kMinBlock - 1)) {
      ++stats_.num_ooms;
      return nullptr;
    }
    rounded = bytes == 0 ? kMinBlock : RoundUp(bytes, kMinBlock);
    ptr = AllocateLocked(rounded);
  }
  // The block is ours alone now, so the hook runs without the lock (it may
  // be slow, e.g. poisoning device memory).
  if (ptr != nullptr && options_.on_allocate) options_.on_allocate(ptr, rounded);
  return ptr;
}

void* BfcAllocator::AllocateLocked(size_t rounded) {
  Block* b = FindFreeLocked(rounded);
  if (b == nullptr) {
    if (!GrowLocked(rounded)) {
      ReleaseFreeRegionsLocked();
      if (!GrowLocked(rounded)) {
        ++stats_.num_ooms;
        return nullptr;
      }
    }
    b = FindFreeLocked(rounded);
    if (b == nullptr) {  // cannot happen: the new region fits the request
      ++stats_.num_ooms;
      return nullptr;
    }
  }
  RemoveFree(b);
  if (b->size > rounded) {
    // The remainder is a multiple of 256 and so always a usable block.
    Block* rest = new Block;
    rest->ptr = b->ptr + rounded;
    rest->size = b->size - rounded;
    rest->prev = b;
    rest->next = b->next;
    if (b->next != nullptr) b->next->prev = rest;
    b->next = rest;
    b->size = rounded;
    InsertFree(rest);
  }
  b->in_use = true;
  in_use_[b->ptr] = b;
  const int64_t size = static_cast<int64_t>(b->size);
  ++stats_.num_allocs;
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size = std::max(stats_.largest_alloc_size, size);
  return b->ptr;
}

BfcAllocator::Block* BfcAllocator::FindFreeLocked(size_t rounded) {
  // Bins below BinFor(rounded) hold only smaller blocks. Within a bin the
  // set's order makes lower_bound the smallest fit at the lowest address, and
  // any block of a higher bin is larger than every block of a lower one.
  Block probe;
  probe.size = rounded;
  for (int bin = BinFor(rounded); bin < kNumBins; ++bin) {
    auto it = bins_[bin].lower_bound(&probe);
    if (it != bins_[bin].end()) return *it;
  }
  return nullptr;
}

bool BfcAllocator::GrowLocked(size_t rounded) {
  size_t left = kMaxSize;
  if (options_.memory_limit > 0) {
    const int64_t room = options_.memory_limit - stats_.bytes_reserved;
    left = room > 0 ? static_cast<size_t>(room) : 0;
  }
  if (rounded > left) return false;
  size_t want = std::max(next_region_bytes_, rounded);
  if (want > left) want = rounded;  // the growth step does not fit: take what is needed
  bool ok = NewRegionLocked(want) != nullptr;
  if (!ok && want > rounded) {
    want = rounded;
    ok = NewRegionLocked(want) != nullptr;
  }
  if (!ok) return false;
  next_region_bytes_ =
      std::max(next_region_bytes_, want > kMaxSize / 2 ? kMaxSize / 2 : 2 * want);
  next_region_bytes_ = next_region_bytes_ / kMinBlock * kMinBlock;
  return true;
}

void* BfcAllocator::NewRegionLocked(size_t bytes) {
  void* mem = sub_->Alloc(bytes);
  if (mem == nullptr) return nullptr;
  if (reinterpret_cast<uintptr_t>(mem) % kMinBlock != 0) {
    // A SubAllocator that breaks its 256-byte alignment contract: refuse the
    // region rather than hand out misaligned blocks.
    sub_->Free(mem, bytes);
    return nullptr;
  }
  auto region = std::make_unique<Region>();
  region->base = static_cast<char*>(mem);
  region->size = bytes;
  region->first = new Block;
  region->first->ptr = region->base;
  region->first->size = bytes;
  InsertFree(region->first);
  regions_.push_back(std::move(region));
  stats_.bytes_reserved += static_cast<int64_t>(bytes);
  return mem;
}

void BfcAllocator::DeallocateRaw(void* ptr, size_t /*bytes*/) {
  if (ptr == nullptr) return;
  absl::MutexLock lock(&mu_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return;  // not ours, or already freed: ignore
  Block* b = it->second;
  in_use_.erase(it);
  FreeBlockLocked(b);
}

void BfcAllocator::FreeBlockLocked(Block* b) {
  b->in_use = false;
  stats_.bytes_in_use -= static_cast<int64_t>(b->size);
  Block* next = b->next;
  if (next != nullptr && !next->in_use) {
    RemoveFree(next);
    b->size += next->size;
    b->next = next->next;
    if (b->next != nullptr) b->next->prev = b;
    delete next;
  }
  Block* prev = b->prev;
  if (prev != nullptr && !prev->in_use) {
    RemoveFree(prev);  // before its size (the set's key) changes
    prev->size += b->size;
    prev->next = b->next;
    if (b->next != nullptr) b->next->prev = prev;
    delete b;
    b = prev;
  }
  InsertFree(b);
}

void BfcAllocator::ReleaseFreeRegions() {
  absl::MutexLock lock(&mu_);
  ReleaseFreeRegionsLocked();
}

size_t BfcAllocator::ReleaseFreeRegionsLocked() {
  size_t released = 0;
  if (options_.may_release_regions && !options_.may_release_regions()) return released;
  auto keep = regions_.begin();
  for (auto it = regions_.begin(); it != regions_.end(); ++it) {
    Region* region = it->get();
    Block* first = region->first;
    // Coalescing keeps a region with nothing in use as one free block.
    if (!first->in_use && first->next == nullptr) {
      RemoveFree(first);
      delete first;
      sub_->Free(region->base, region->size);
      stats_.bytes_reserved -= static_cast<int64_t>(region->size);
      released += region->size;
      it->reset();
    } else {
      if (keep != it) *keep = std::move(*it);
      ++keep;
    }
  }
  regions_.erase(keep, regions_.end());
  return released;
}

int64_t BfcAllocator::LargestFreeBlockLocked() const {
  for (int bin = kNumBins - 1; bin >= 0; --bin) {
    if (!bins_[bin].empty()) return static_cast<int64_t>((*bins_[bin].rbegin())->size);
  }
  return 0;
}

AllocatorStats BfcAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  AllocatorStats s = stats_;
  s.largest_free_block = LargestFreeBlockLocked();
  return s;
}

void BfcAllocator::ResetPeakForTesting() {
  absl::MutexLock lock(&mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

std::string BfcAllocator::DebugString() const {
  absl::MutexLock lock(&mu_);
  std::string out = absl::StrFormat(
      "BfcAllocator '%s': %d bytes in use in %d blocks (peak %d, largest %d), "
      "%d bytes reserved in %d regions, limit %d, largest free block %d, "
      "%d allocations, %d OOMs\n",
      options_.name, stats_.bytes_in_use, in_use_.size(), stats_.peak_bytes_in_use,
      stats_.largest_alloc_size, stats_.bytes_reserved, regions_.size(),
      options_.memory_limit, LargestFreeBlockLocked(), stats_.num_allocs,
      stats_.num_ooms);
  for (const auto& region : regions_) {
    int64_t used = 0, used_blocks = 0, unused = 0, free_blocks = 0;
    for (Block* b = region->first; b != nullptr; b = b->next) {
      (b->in_use ? used : unused) += static_cast<int64_t>(b->size);
      ++(b->in_use ? used_blocks : free_blocks);
    }
    absl::StrAppendFormat(&out,
                          "  region [%p, %p) %d bytes: %d in use in %d blocks, "
                          "%d free in %d blocks\n",
                          static_cast<void*>(region->base),
                          static_cast<void*>(region->base + region->size), region->size,
                          used, used_blocks, unused, free_blocks);
    int shown = 0;
    for (Block* b = region->first; b != nullptr; b = b->next, ++shown) {
      if (shown == kMaxBlocksShown) {
        absl::StrAppend(&out, "    ... ", used_blocks + free_blocks - shown,
                        " more blocks\n");
        break;
      }
      absl::StrAppendFormat(&out, "    %p %d %s\n", static_cast<void*>(b->ptr), b->size,
                            b->in_use ? "in use" : "free");
    }
  }
  for (int bin = 0; bin < kNumBins; ++bin) {
    if (bins_[bin].empty()) continue;
    int64_t bytes = 0;
    for (const Block* b : bins_[bin]) bytes += static_cast<int64_t>(b->size);
    if (bin == kNumBins - 1) {
      absl::StrAppendFormat(&out, "  bin %d [%d, ...): %d free blocks, %d bytes\n", bin,
                            kMinBlock << bin, bins_[bin].size(), bytes);
    } else {
      absl::StrAppendFormat(&out, "  bin %d [%d, %d): %d free blocks, %d bytes\n", bin,
                            kMinBlock << bin, kMinBlock << (bin + 1), bins_[bin].size(),
                            bytes);
    }
  }
  return out;
}

}  // namespace sluice
