// SignatureCache<T>: what a session built for each run signature (feeds,
// fetches, targets; the key is RunSignatureKey), built once and shared by
// every Run of that signature. The local session caches its StepPartitions
// here, the master its registered task graphs.
//
//   SignatureCache<Compiled> cache;
//   ASSIGN_OR_RETURN(std::shared_ptr<Compiled> c,
//                    cache.GetOrBuild(key, [&]() { return Compile(...); }));
//   ...
//   cache.Clear();  // after Extend: the next Run compiles again
//
// Building runs under the cache's lock, so a signature's first concurrent
// Runs build it once, and Clear() (which waits for a build in progress)
// never leaves behind an entry of an older graph. Lookups take a shared lock.
//
// Thread-safe. Entries are shared: a Run keeps using what it got after the
// entry is erased.
#ifndef SLUICE_SESSION_SIGNATURE_CACHE_H_
#define SLUICE_SESSION_SIGNATURE_CACHE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

template <typename T>
class SignatureCache {
 public:
  using Builder = absl::FunctionRef<absl::StatusOr<std::shared_ptr<T>>()>;

  // The entry for `key`, built by `build` when missing (an error is not
  // cached). FailedPrecondition "session is closed" after Close().
  absl::StatusOr<std::shared_ptr<T>> GetOrBuild(const std::string& key, Builder build) {
    {
      absl::ReaderMutexLock lock(&mu_);
      if (closed_) return Closed();
      auto it = entries_.find(key);
      if (it != entries_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    if (closed_) return Closed();
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    absl::StatusOr<std::shared_ptr<T>> built = build();
    if (built.ok()) entries_[key] = *built;
    return built;
  }

  bool closed() {
    absl::ReaderMutexLock lock(&mu_);
    return closed_;
  }

  // Removes `key`'s entry; returns it (null when none), for the caller to
  // release outside its own locks.
  std::shared_ptr<T> Erase(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    std::shared_ptr<T> out = std::move(it->second);
    entries_.erase(it);
    return out;
  }

  // Removes every entry; returns them.
  std::vector<std::shared_ptr<T>> Clear() {
    absl::MutexLock lock(&mu_);
    return TakeAll();
  }

  // Clear(), and every later GetOrBuild fails. False when already closed.
  bool Close(std::vector<std::shared_ptr<T>>* entries) {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    closed_ = true;
    *entries = TakeAll();
    return true;
  }

 private:
  static absl::Status Closed() { return absl::FailedPreconditionError("session is closed"); }
  std::vector<std::shared_ptr<T>> TakeAll() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::shared_ptr<T>> out;
    for (auto& [key, entry] : entries_) out.push_back(std::move(entry));
    entries_.clear();
    return out;
  }

  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<T>> entries_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sluice

#endif  // SLUICE_SESSION_SIGNATURE_CACHE_H_
