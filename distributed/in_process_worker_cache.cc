#include "distributed/in_process_worker_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace sluice {

// Forwards each call to the task's worker while it is alive, counting it in
// flight.
class InProcessWorkerCache::Forwarder : public WorkerInterface {
 public:
  Forwarder(InProcessWorkerCache* cache, std::string task)
      : cache_(cache), task_(std::move(task)) {}

  absl::StatusOr<WorkerInfo> GetStatus() override {
    return Call<absl::StatusOr<WorkerInfo>>([](WorkerInterface* w) { return w->GetStatus(); });
  }
  absl::StatusOr<std::string> RegisterGraph(
      const std::string& session_handle,
      const std::map<std::string, tensorflow::GraphDef>& partitions) override {
    return Call<absl::StatusOr<std::string>>(
        [&](WorkerInterface* w) { return w->RegisterGraph(session_handle, partitions); });
  }
  absl::Status DeregisterGraph(const std::string& graph_handle) override {
    return Call<absl::Status>([&](WorkerInterface* w) { return w->DeregisterGraph(graph_handle); });
  }
  absl::Status RunGraph(const RunGraphArgs& args, std::map<int, Tensor>* retvals) override {
    return Call<absl::Status>([&](WorkerInterface* w) { return w->RunGraph(args, retvals); });
  }
  absl::StatusOr<Tensor> RecvTensor(int64_t step_id, const std::string& key,
                                    int64_t timeout_ms) override {
    return Call<absl::StatusOr<Tensor>>(
        [&](WorkerInterface* w) { return w->RecvTensor(step_id, key, timeout_ms); });
  }
  absl::Status AbortStep(int64_t step_id, const absl::Status& reason) override {
    return Call<absl::Status>([&](WorkerInterface* w) { return w->AbortStep(step_id, reason); });
  }
  absl::Status CleanupStep(int64_t step_id) override {
    return Call<absl::Status>([&](WorkerInterface* w) { return w->CleanupStep(step_id); });
  }
  absl::Status CollectivePush(const std::string& to_device, const std::string& key,
                              const Tensor& value, int64_t timeout_ms) override {
    return Call<absl::Status>(
        [&](WorkerInterface* w) { return w->CollectivePush(to_device, key, value, timeout_ms); });
  }
  absl::StatusOr<WorkerInfo> GetStatusWithin(int64_t timeout_ms) override {
    return Call<absl::StatusOr<WorkerInfo>>(
        [&](WorkerInterface* w) { return w->GetStatusWithin(timeout_ms); });
  }

 private:
  template <typename R, typename F>
  R Call(F f) {
    absl::StatusOr<WorkerInterface*> w = cache_->Enter(task_);
    if (!w.ok()) return w.status();
    R result = f(*w);
    cache_->Leave();
    return result;
  }

  InProcessWorkerCache* const cache_;
  const std::string task_;
};

InProcessWorkerCache::InProcessWorkerCache() = default;
InProcessWorkerCache::~InProcessWorkerCache() { Quiesce(); }

void InProcessWorkerCache::Add(const std::string& task, WorkerInterface* worker) {
  absl::MutexLock lock(&mu_);
  Entry& e = tasks_[task];
  e.worker = worker;
  if (e.forwarder == nullptr) e.forwarder = std::make_unique<Forwarder>(this, task);
}

void InProcessWorkerCache::SetDead(const std::string& task, bool dead) {
  absl::MutexLock lock(&mu_);
  Entry& e = tasks_[task];
  e.dead = dead;
  if (e.forwarder == nullptr) e.forwarder = std::make_unique<Forwarder>(this, task);
}

void InProcessWorkerCache::Quiesce() {
  absl::MutexLock lock(&mu_);
  for (auto& [task, e] : tasks_) e.dead = true;
  mu_.Await(absl::Condition(+[](int* n) { return *n == 0; }, &in_flight_));
}

absl::StatusOr<WorkerInterface*> InProcessWorkerCache::GetWorker(const std::string& task) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task);
  if (it == tasks_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", task, " is not in the cluster"));
  }
  return it->second.forwarder.get();
}

std::vector<std::string> InProcessWorkerCache::ListTasks() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [task, e] : tasks_) out.push_back(task);
  return out;
}

absl::StatusOr<WorkerInterface*> InProcessWorkerCache::Enter(const std::string& task) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(task);
  if (it == tasks_.end() || it->second.dead || it->second.worker == nullptr) {
    return absl::UnavailableError(absl::StrCat("task ", task, " is unreachable (marked dead)"));
  }
  ++in_flight_;
  return it->second.worker;
}

void InProcessWorkerCache::Leave() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

}  // namespace sluice
