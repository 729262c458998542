// InProcessWorkerCache: a WorkerCache over workers of this process, for tests
// that run several tasks without RPC. A task can be marked dead: GetWorker
// then returns a stand-in whose every call fails with Unavailable naming the
// task, as an unreachable peer would.
//
//   InProcessWorkerCache cache;
//   cache.Add("/job:ps/replica:0/task:0", ps.get());
//   cache.Add("/job:worker/replica:0/task:0", worker.get());
//   cache.SetDead("/job:ps/replica:0/task:0", true);
//
// Thread-safe. The workers are borrowed and must outlive the cache's use.
#ifndef SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
#define SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distributed/worker_interface.h"

namespace sluice {

class InProcessWorkerCache : public WorkerCache {
 public:
  InProcessWorkerCache() = default;
  InProcessWorkerCache(const InProcessWorkerCache&) = delete;
  InProcessWorkerCache& operator=(const InProcessWorkerCache&) = delete;

  // Adds (or replaces) the worker of `task`.
  void Add(const std::string& task, WorkerInterface* worker);
  void SetDead(const std::string& task, bool dead);

  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;
  // Sorted by name.
  std::vector<std::string> ListTasks() const override;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, WorkerInterface*> workers_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dead_ ABSL_GUARDED_BY(mu_);
  // One stand-in per task ever marked dead; kept for the cache's life since
  // callers hold the pointer.
  std::map<std::string, std::unique_ptr<WorkerInterface>> dead_workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
