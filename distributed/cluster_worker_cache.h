// ClusterWorkerCache: the WorkerCache of a real cluster: this process's own
// worker (if it hosts one) called directly, every other task through a
// RemoteWorker made on first use.
//
//   ClusterWorkerCache cache(spec, "/job:worker/replica:0/task:0");
//   cache.SetLocalWorker(local_worker.get());   // before the first GetWorker
//   ASSIGN_OR_RETURN(WorkerInterface* ps0, cache.GetWorker("/job:ps/replica:0/task:0"));
//
// Thread-safe. The local worker is borrowed.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_WORKER_CACHE_H_
#define SLUICE_DISTRIBUTED_CLUSTER_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/remote_worker.h"
#include "distributed/worker_interface.h"

namespace sluice {

class ClusterWorkerCache : public WorkerCache {
 public:
  ClusterWorkerCache(ClusterSpec cluster, std::string local_task = "", RpcOptions rpc_options = {});
  // The worker of `local_task` in this process (borrowed), called directly.
  void SetLocalWorker(WorkerInterface* local);

  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;
  std::vector<std::string> ListTasks() const override { return cluster_.AllTasks(); }
  const ClusterSpec& cluster() const { return cluster_; }

 private:
  const ClusterSpec cluster_;
  const std::string local_task_;
  const RpcOptions rpc_options_;
  absl::Mutex mu_;
  WorkerInterface* local_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, std::unique_ptr<RemoteWorker>> remote_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_WORKER_CACHE_H_
