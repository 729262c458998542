#include "distributed/service_handlers.h"

#include "absl/strings/str_cat.h"
#include "distributed/random_id.h"
#include "distributed/rpc/session_config_wire.h"
#include "distributed/rpc/tensor_wire.h"

namespace sluice {
namespace {

// Handlers report failures by throwing, which the generated processor turns
// into the declared RpcError reply.
void ThrowIfError(const absl::Status& s) {
  if (!s.ok()) throw ToRpcError(s);
}

template <typename T>
T ValueOrThrow(absl::StatusOr<T> v) {
  ThrowIfError(v.status());
  return *std::move(v);
}

absl::StatusOr<GraphDef> ParseGraph(const std::string& bytes, absl::string_view what) {
  GraphDef def;
  if (!def.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a serialized GraphDef"));
  }
  return def;
}

}  // namespace

void WorkerServiceHandler::GetStatus(rpc::WorkerStatus& out) {
  WorkerInfo info = ValueOrThrow(worker_->GetStatus());
  out.task = info.task;
  out.incarnation = info.incarnation;
  for (const DeviceInfo& d : info.devices) {
    rpc::DeviceAttributes a;
    a.name = d.name;
    a.device_type = d.device_type;
    a.memory_limit = d.memory_limit;
    out.devices.push_back(std::move(a));
  }
}

void WorkerServiceHandler::RegisterGraph(rpc::RegisterGraphResponse& out,
                                         const rpc::RegisterGraphRequest& req) {
  std::map<std::string, GraphDef> partitions;
  for (const auto& [device, bytes] : req.partitions) {
    partitions[device] =
        ValueOrThrow(ParseGraph(bytes, absl::StrCat("the partition for ", device)));
  }
  out.graph_handle = ValueOrThrow(worker_->RegisterGraph(req.session_handle, partitions));
}

void WorkerServiceHandler::DeregisterGraph(const std::string& graph_handle) {
  ThrowIfError(worker_->DeregisterGraph(graph_handle));
}

void WorkerServiceHandler::RunGraph(rpc::RunGraphResponse& out, const rpc::RunGraphRequest& req) {
  RunGraphArgs args;
  args.graph_handle = req.graph_handle;
  args.step_id = req.step_id;
  args.timeout_ms = req.timeout_ms;
  args.retval_indices = req.retval_indices;
  for (const auto& [index, wire] : req.feeds) args.feeds[index] = ValueOrThrow(TensorFromWire(wire));
  std::map<int, Tensor> retvals;
  ThrowIfError(worker_->RunGraph(args, &retvals));
  for (const auto& [index, t] : retvals) ThrowIfError(TensorToWire(t, &out.retvals[index]));
}

// Never reached: the server answers RecvTensor from the worker's
// TensorSource, without copying (rpc/service_processor.h).
void WorkerServiceHandler::RecvTensor(rpc::RecvTensorResponse&, const rpc::RecvTensorRequest&) {
  ThrowIfError(absl::InternalError("RecvTensor reached the copying handler"));
}

void WorkerServiceHandler::AbortStep(int64_t step_id, int32_t code, const std::string& message) {
  ThrowIfError(worker_->AbortStep(step_id, absl::Status(static_cast<absl::StatusCode>(code), message)));
}

void WorkerServiceHandler::CleanupStep(int64_t step_id) {
  ThrowIfError(worker_->CleanupStep(step_id));
}

void WorkerServiceHandler::CollectivePush(const std::string& to_device, const std::string& key,
                                          const rpc::TensorWire& value, int64_t timeout_ms) {
  Tensor t = ValueOrThrow(TensorFromWire(value));
  ThrowIfError(worker_->CollectivePush(to_device, key, t, timeout_ms));
}

std::shared_ptr<MasterSession> MasterServiceHandler::Find(const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) {
    throw ToRpcError(absl::NotFoundError(absl::StrCat(
        "no session '", handle,
        "' on this master (closed, unused past its idle limit, or the master restarted)")));
  }
  it->second.last_used = absl::Now();
  return it->second.session;
}

std::vector<std::shared_ptr<MasterSession>> MasterServiceHandler::TakeIdleSessions() {
  std::vector<std::shared_ptr<MasterSession>> idle;
  const absl::Time now = absl::Now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (now - it->second.last_used > session_idle_ttl_) {
      idle.push_back(std::move(it->second.session));
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
  return idle;
}

void MasterServiceHandler::CreateSession(rpc::CreateSessionResponse& out,
                                         const rpc::CreateSessionRequest& req) {
  GraphDef def = ValueOrThrow(ParseGraph(req.graph_def, "the session's graph"));
  MasterSessionOptions options = options_;
  options.session = SessionConfigFromWire(req.config, options_.session);
  std::unique_ptr<MasterSession> session = ValueOrThrow(MasterSession::Create(options, def));
  std::vector<std::shared_ptr<MasterSession>> idle;
  {
    absl::MutexLock lock(&mu_);
    out.session_handle = absl::StrCat("master_session/", RandomId128());  // unguessable
    sessions_[out.session_handle] = Entry{std::move(session), absl::Now()};
    idle = TakeIdleSessions();
  }
  for (auto& s : idle) (void)s->Close();  // their graphs deregistered, outside the lock
}

void MasterServiceHandler::ExtendSession(const std::string& session_handle,
                                         const std::string& graph_def) {
  GraphDef def = ValueOrThrow(ParseGraph(graph_def, "the extension"));
  ThrowIfError(Find(session_handle)->Extend(def));
}

void MasterServiceHandler::RunStep(rpc::RunStepResponse& out, const rpc::RunStepRequest& req) {
  std::shared_ptr<MasterSession> session = Find(req.session_handle);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const rpc::NamedTensor& f : req.feeds) {
    feeds.emplace_back(f.name, ValueOrThrow(TensorFromWire(f.tensor)));
  }
  RunOptions options;
  options.timeout_in_ms = req.timeout_in_ms;
  options.output_partition_graphs = req.output_partition_graphs;
  RunMetadata metadata;
  std::vector<Tensor> fetched =
      ValueOrThrow(session->Run(feeds, req.fetches, req.targets, options, &metadata));
  for (const GraphDef& g : metadata.partition_graphs) {
    std::string bytes;
    if (!g.SerializeToString(&bytes)) {
      ThrowIfError(absl::InternalError("cannot serialize a partition graph"));
    }
    out.partition_graphs.push_back(std::move(bytes));
  }
  for (const Tensor& t : fetched) {
    rpc::TensorWire wire;
    ThrowIfError(TensorToWire(t, &wire));
    out.fetches.push_back(std::move(wire));
  }
}

void MasterServiceHandler::CloseSession(const std::string& session_handle) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(session_handle);
    if (it == sessions_.end()) return;  // closing twice is fine
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  ThrowIfError(session->Close());
}

void MasterServiceHandler::ListDevices(std::vector<rpc::DeviceAttributes>& out) {
  // The cluster's devices, as a throwaway session discovers them.
  std::unique_ptr<MasterSession> probe = ValueOrThrow(MasterSession::Create(options_, GraphDef()));
  for (const DeviceInfo& d : probe->DeviceInfos()) {
    rpc::DeviceAttributes a;
    a.name = d.name;
    a.device_type = d.device_type;
    a.memory_limit = d.memory_limit;
    out.push_back(std::move(a));
  }
}

}  // namespace sluice
