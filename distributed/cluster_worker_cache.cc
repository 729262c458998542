#include "distributed/cluster_worker_cache.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "placement/device_name.h"

namespace sluice {

ClusterWorkerCache::ClusterWorkerCache(ClusterSpec cluster, std::string local_task,
                                       RpcOptions rpc_options)
    : cluster_(std::move(cluster)), local_task_(std::move(local_task)), rpc_options_(rpc_options) {}

void ClusterWorkerCache::SetLocalWorker(WorkerInterface* local) {
  absl::MutexLock lock(&mu_);
  local_ = local;
}

absl::StatusOr<WorkerInterface*> ClusterWorkerCache::GetWorker(const std::string& task) {
  absl::MutexLock lock(&mu_);
  if (local_ != nullptr && task == local_task_) return local_;
  auto it = remote_.find(task);
  if (it != remote_.end()) return it->second.get();
  absl::StatusOr<DeviceName> name = DeviceName::Parse(task);
  if (!name.ok() || !name->job || !name->task) {
    return absl::NotFoundError(absl::StrCat("'", task, "' is not a task name"));
  }
  absl::StatusOr<std::string> address = cluster_.Address(*name->job, *name->task);
  if (!address.ok()) {
    return absl::NotFoundError(absl::StrCat("task ", task, " is not in the cluster (tasks: ",
                                            absl::StrJoin(cluster_.AllTasks(), ", "), ")"));
  }
  auto worker = std::make_unique<RemoteWorker>(task, *address, rpc_options_);
  WorkerInterface* w = worker.get();
  remote_[task] = std::move(worker);
  return w;
}

}  // namespace sluice
