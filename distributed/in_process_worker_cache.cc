#include "distributed/in_process_worker_cache.h"

#include "absl/strings/str_cat.h"

namespace sluice {
namespace {

class DeadWorker : public WorkerInterface {
 public:
  explicit DeadWorker(std::string task) : task_(std::move(task)) {}

  absl::StatusOr<WorkerInfo> GetStatus() override { return Error(); }
  absl::StatusOr<std::string> RegisterGraph(
      const std::string&, const std::map<std::string, tensorflow::GraphDef>&) override {
    return Error();
  }
  absl::Status DeregisterGraph(const std::string&) override { return Error(); }
  absl::Status RunGraph(const RunGraphArgs&, std::map<int, Tensor>*) override { return Error(); }
  absl::StatusOr<Tensor> RecvTensor(int64_t, const std::string&, int64_t) override {
    return Error();
  }
  absl::Status AbortStep(int64_t, const absl::Status&) override { return Error(); }
  absl::Status CleanupStep(int64_t) override { return Error(); }

 private:
  absl::Status Error() const {
    return absl::UnavailableError(absl::StrCat("task ", task_, " is unreachable (marked dead)"));
  }
  const std::string task_;
};

}  // namespace

void InProcessWorkerCache::Add(const std::string& task, WorkerInterface* worker) {
  absl::MutexLock lock(&mu_);
  workers_[task] = worker;
}

void InProcessWorkerCache::SetDead(const std::string& task, bool dead) {
  absl::MutexLock lock(&mu_);
  if (dead) {
    dead_.insert(task);
    auto& stand_in = dead_workers_[task];
    if (stand_in == nullptr) stand_in = std::make_unique<DeadWorker>(task);
  } else {
    dead_.erase(task);
  }
}

absl::StatusOr<WorkerInterface*> InProcessWorkerCache::GetWorker(const std::string& task) {
  absl::MutexLock lock(&mu_);
  if (dead_.count(task) > 0) return dead_workers_.at(task).get();
  auto it = workers_.find(task);
  if (it == workers_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", task, " is not in the cluster"));
  }
  return it->second;
}

std::vector<std::string> InProcessWorkerCache::ListTasks() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [task, w] : workers_) out.push_back(task);
  return out;
}

}  // namespace sluice
