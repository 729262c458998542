// IteratorContext: what an iterator's GetNext, Initialize and Restore may use
// beyond its dataset: where element tensors are allocated, the function
// runtime of the device the iterator lives on, and a background pool for
// short work (an IteratorGetNext's call, a parallel call's completion).
//
//   IteratorContext ctx({.allocator = device->allocator(),
//                        .function_runtime = fr,   // may be nullptr
//                        .background_pool = &pool});
//   ASSIGN_OR_RETURN(auto it, dataset->MakeIterator(&ctx, "Iterator"));
//   RETURN_IF_ERROR(it->GetNext(&ctx, &element, &end_of_sequence));
//
// Iterators that run their own threads (prefetch, parallel map) start them
// themselves and never block a background_pool thread on their input.
//
// Thread-safe: a context is read-only once made. Ownership: borrows every
// pointer; the iterator resource (ops/data) owns them and outlives its
// iterators' calls.
#ifndef SLUICE_RUNTIME_DATA_ITERATOR_CONTEXT_H_
#define SLUICE_RUNTIME_DATA_ITERATOR_CONTEXT_H_

#include "runtime/allocator.h"
#include "runtime/function_runtime.h"
#include "runtime/thread_pool.h"

namespace sluice {
namespace data {

class IteratorContext {
 public:
  struct Params {
    Allocator* allocator = nullptr;  // nullptr: the default CPU allocator
    FunctionRuntime* function_runtime = nullptr;
    ThreadPool* background_pool = nullptr;
  };
  explicit IteratorContext(const Params& params) : p_(params) {
    if (p_.allocator == nullptr) p_.allocator = DefaultCpuAllocator();
  }

  Allocator* allocator() const { return p_.allocator; }
  FunctionRuntime* function_runtime() const { return p_.function_runtime; }
  ThreadPool* background_pool() const { return p_.background_pool; }
  const Params& params() const { return p_; }

 private:
  Params p_;
};

}  // namespace data
}  // namespace sluice

#endif  // SLUICE_RUNTIME_DATA_ITERATOR_CONTEXT_H_
