#include "distributed/rpc/rpc_testutil.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "distributed/rpc/tensor_wire.h"

namespace sluice {

void FakeTensorSource::Provide(int64_t step_id, const std::string& key, Tensor tensor) {
  absl::MutexLock lock(&mu_);
  tensors_[{step_id, key}] = std::move(tensor);
}

void FakeTensorSource::Abort(int64_t step_id, absl::Status reason) {
  absl::MutexLock lock(&mu_);
  aborted_[step_id] = std::move(reason);
}

absl::StatusOr<Tensor> FakeTensorSource::WaitForTensor(int64_t step_id, const std::string& key,
                                                       int64_t timeout_ms) {
  ++waiting_;
  absl::MutexLock lock(&mu_);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return tensors_.count({step_id, key}) > 0 || aborted_.count(step_id) > 0;
  };
  bool done = mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(timeout_ms));
  --waiting_;
  if (!done) {
    return absl::DeadlineExceededError(
        absl::StrCat("tensor '", key, "' of step ", step_id, " not sent within ", timeout_ms, " ms"));
  }
  auto a = aborted_.find(step_id);
  if (a != aborted_.end()) return a->second;
  return tensors_[{step_id, key}];
}

void FakeWorker::GetStatus(rpc::WorkerStatus& out) {
  ++status_calls;
  if (get_status_delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(get_status_delay_ms.load()));
  }
  out.task = task_;
  rpc::DeviceAttributes cpu;
  cpu.name = task_ + "/device:CPU:0";
  cpu.device_type = "CPU";
  out.devices.push_back(cpu);
  out.incarnation = 77;
}

void FakeWorker::RegisterGraph(rpc::RegisterGraphResponse& out, const rpc::RegisterGraphRequest& req) {
  int64_t bytes = 0;
  for (const auto& [device, graph] : req.partitions) bytes += static_cast<int64_t>(graph.size());
  registered_bytes += bytes;
  out.graph_handle = absl::StrCat("graph", bytes);
}

void FakeWorker::DeregisterGraph(const std::string& graph_handle) {
  if (graph_handle == "throw") throw std::runtime_error("handler bug");
  if (!absl::StartsWith(graph_handle, "graph")) {
    throw ToRpcError(absl::NotFoundError(absl::StrCat("no graph '", graph_handle, "'")));
  }
}

void FakeWorker::RunGraph(rpc::RunGraphResponse& out, const rpc::RunGraphRequest& req) {
  for (const auto& [index, wire] : req.feeds) out.retvals[index] = wire;
}

void FakeWorker::RecvTensor(rpc::RecvTensorResponse& out, const rpc::RecvTensorRequest& req) {
  std::vector<float> v(req.rendezvous_key.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  absl::Status s = TensorToWire(Tensor::FromVector<float>(v), &out.tensor);
  if (!s.ok()) throw ToRpcError(s);
}

void FakeWorker::AbortStep(int64_t step_id, int32_t code, const std::string& /*message*/) {
  last_aborted_step = step_id;
  last_abort_code = code;
}

void FakeWorker::CleanupStep(int64_t step_id) {
  if (step_id < 0) throw ToRpcError(absl::InvalidArgumentError("negative step id"));
}

void FakeWorker::CollectivePush(const std::string& to_device, const std::string& key,
                                const rpc::TensorWire& value, int64_t timeout_ms) {
  if (key == "refuse") {
    throw ToRpcError(absl::FailedPreconditionError(absl::StrCat("refused push '", key, "'")));
  }
  ++pushes;
  absl::MutexLock lock(&mu_);
  last_push_key_ = key;
}

std::string FakeWorker::last_push_key() {
  absl::MutexLock lock(&mu_);
  return last_push_key_;
}

absl::Status FakeTensorSink::AcceptCollectivePush(const std::string& to_device,
                                                  const std::string& key, Tensor value,
                                                  int64_t timeout_ms, const std::string& sender) {
  absl::MutexLock lock(&mu_);
  last_sender_ = sender;
  if (!pushed_.emplace(std::make_pair(to_device, key), std::move(value)).second) {
    return absl::FailedPreconditionError(
        absl::StrCat("a value for '", key, "' to ", to_device, " was already pushed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> FakeTensorSink::Take(const std::string& to_device, const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = pushed_.find({to_device, key});
  if (it == pushed_.end()) return absl::NotFoundError(absl::StrCat("no push '", key, "'"));
  Tensor t = std::move(it->second);
  pushed_.erase(it);
  return t;
}

void FakeMaster::CreateSession(rpc::CreateSessionResponse& out, const rpc::CreateSessionRequest& req) {
  absl::MutexLock lock(&mu_);
  out.session_handle = absl::StrCat("session", next_++);
  sessions_[out.session_handle] = req.graph_def;
}

void FakeMaster::ExtendSession(const std::string& session_handle, const std::string& graph_def) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(session_handle);
  if (it == sessions_.end()) {
    throw ToRpcError(absl::NotFoundError(absl::StrCat("no session '", session_handle, "'")));
  }
  it->second += graph_def;
}

void FakeMaster::RunStep(rpc::RunStepResponse& out, const rpc::RunStepRequest& req) {
  {
    absl::MutexLock lock(&mu_);
    if (sessions_.count(req.session_handle) == 0) {
      throw ToRpcError(absl::NotFoundError(absl::StrCat("no session '", req.session_handle, "'")));
    }
  }
  for (const std::string& f : req.fetches) {
    rpc::TensorWire w;
    absl::Status s = TensorToWire(Tensor::Scalar<int64_t>(static_cast<int64_t>(f.size())), &w);
    if (!s.ok()) throw ToRpcError(s);
    out.fetches.push_back(std::move(w));
  }
}

void FakeMaster::CloseSession(const std::string& session_handle) {
  absl::MutexLock lock(&mu_);
  if (sessions_.erase(session_handle) == 0) {
    throw ToRpcError(absl::NotFoundError(absl::StrCat("no session '", session_handle, "'")));
  }
}

void FakeMaster::ListDevices(std::vector<rpc::DeviceAttributes>& out) {
  rpc::DeviceAttributes d;
  d.name = "/job:chief/replica:0/task:0/device:CPU:0";
  d.device_type = "CPU";
  d.memory_limit = 1 << 30;
  out.push_back(d);
}

std::string FreshTestDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/", name);
  (void)std::system(absl::StrCat("rm -rf '", dir, "'").c_str());
  return dir;
}

}  // namespace sluice
