// InProcessWorkerCache: a WorkerCache over workers of this process, for tests
// that run several tasks without RPC. GetWorker hands out a stand-in per
// task that forwards to the task's worker; a task marked dead makes every
// call through its stand-in fail with Unavailable naming the task, as an
// unreachable peer would.
//
//   InProcessWorkerCache cache;
//   cache.Add("/job:ps/replica:0/task:0", ps.get());
//   cache.Add("/job:worker/replica:0/task:0", worker.get());
//   cache.SetDead("/job:ps/replica:0/task:0", true);
//   ...
//   cache.Quiesce();  // before destroying the workers
//
// In-process workers call each other directly (a worker's rendezvous fetches
// from its peers through this cache), so tear down with Quiesce first: it
// stops further calls and waits for those in flight, which end once their
// steps are aborted (or time out).
//
// Thread-safe. The workers are borrowed and must outlive their use.
#ifndef SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
#define SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "distributed/worker_interface.h"

namespace sluice {

class InProcessWorkerCache : public WorkerCache {
 public:
  InProcessWorkerCache();
  ~InProcessWorkerCache() override;
  InProcessWorkerCache(const InProcessWorkerCache&) = delete;
  InProcessWorkerCache& operator=(const InProcessWorkerCache&) = delete;

  // Adds (or replaces) the worker of `task`.
  void Add(const std::string& task, WorkerInterface* worker);
  void SetDead(const std::string& task, bool dead);
  // Marks every task dead and waits for the calls in flight to return.
  void Quiesce();

  // NotFound for a task never added.
  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;
  // Sorted by name.
  std::vector<std::string> ListTasks() const override;

 private:
  class Forwarder;
  struct Entry {
    WorkerInterface* worker = nullptr;
    bool dead = false;
    std::unique_ptr<Forwarder> forwarder;  // what GetWorker returns
  };
  // The worker to call, counted in flight until Leave; Unavailable when dead.
  absl::StatusOr<WorkerInterface*> Enter(const std::string& task);
  void Leave();

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> tasks_ ABSL_GUARDED_BY(mu_);
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_IN_PROCESS_WORKER_CACHE_H_
