// CallPool: threads for blocking calls (RPCs that wait on a peer). Unlike a
// fixed ThreadPool it never queues a call behind a blocked one: an idle
// thread takes it, else a new thread starts (idle threads beyond
// `max_idle` exit), so calls that wait on each other cannot deadlock.
// max_idle should cover the calls a step makes at once: a parameter server
// receives every gradient of every worker at once, and a thread started
// and ended per call cost a sixth of its CPU (call_pool_test).
//
//   CallPool pool("recv", /*max_idle=*/64);
//   pool.Schedule([&] { auto t = stub->RecvTensor(...); ... });
//
// Thread-safe. The destructor waits for running calls to finish.
#ifndef SLUICE_DISTRIBUTED_CALL_POOL_H_
#define SLUICE_DISTRIBUTED_CALL_POOL_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace sluice {

class CallPool {
 public:
  explicit CallPool(std::string name, int max_idle = 64);
  ~CallPool();
  CallPool(const CallPool&) = delete;
  CallPool& operator=(const CallPool&) = delete;

  void Schedule(std::function<void()> fn);

  // Threads started so far (tests: a repeated burst starts none).
  int ThreadsStartedForTesting() const {
    absl::MutexLock lock(&mu_);
    return started_;
  }

 private:
  void Loop();
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !queue_.empty() || stopping_;
  }
  // Moves the calling thread to exited_ (joined later) and uncounts it.
  void LeavePool() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_;
  const int max_idle_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int idle_ ABSL_GUARDED_BY(mu_) = 0;
  int running_ ABSL_GUARDED_BY(mu_) = 0;  // threads alive
  int started_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::thread::id, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> exited_ ABSL_GUARDED_BY(mu_);  // to join
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CALL_POOL_H_
