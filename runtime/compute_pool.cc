#include "runtime/compute_pool.h"

namespace sluice {
namespace {

thread_local ThreadPool* current_pool = nullptr;

}  // namespace

ThreadPool* CurrentComputePool() { return current_pool; }

ScopedComputePool::ScopedComputePool(ThreadPool* pool) : previous_(current_pool) {
  current_pool = pool;
}

ScopedComputePool::~ScopedComputePool() { current_pool = previous_; }

}  // namespace sluice
