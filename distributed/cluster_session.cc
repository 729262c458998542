#include "distributed/cluster_session.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "distributed/cluster_worker_cache.h"
#include "distributed/master_session.h"
#include "distributed/rpc/job_credentials.h"
#include "distributed/rpc/master_stub.h"
#include "distributed/rpc/session_config_wire.h"
#include "distributed/rpc/socket_util.h"
#include "distributed/rpc/tensor_wire.h"
#include "base/status_macros.h"
#include "builtin_session.h"

namespace sluice {
namespace {

// A Session whose master is another process: every call is one RPC.
class RemoteSession : public Session {
 public:
  RemoteSession(std::string address, RpcOptions rpc)
      : stub_(absl::StrCat("master at ", address), address, rpc) {}
  ~RemoteSession() override { (void)Close(); }

  absl::Status Create(const GraphDef& def, const ClusterSessionOptions& options) {
    rpc::CreateSessionRequest req;
    if (!def.SerializeToString(&req.graph_def)) {
      return absl::InvalidArgumentError("cannot serialize the graph");
    }
    req.config = SessionConfigToWire(options.session);
    ASSIGN_OR_RETURN(handle_, stub_.CreateSession(req));
    ASSIGN_OR_RETURN(std::vector<rpc::DeviceAttributes> devices, stub_.ListDevices());
    for (const rpc::DeviceAttributes& d : devices) {
      devices_.push_back(d.name);
      AllocatorStats s;
      s.bytes_limit = d.memory_limit;
      stats_.push_back(s);
    }
    return absl::OkStatus();
  }

  absl::Status Extend(const GraphDef& def) override {
    std::string bytes;
    if (!def.SerializeToString(&bytes)) return absl::InvalidArgumentError("cannot serialize the graph");
    return stub_.ExtendSession(handle_, bytes);
  }

  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets,
                                          const RunOptions& options,
                                          RunMetadata* metadata) override {
    rpc::RunStepRequest req;
    req.session_handle = handle_;
    for (const auto& [name, t] : feeds) {
      rpc::NamedTensor f;
      f.name = name;
      RETURN_IF_ERROR(TensorToWire(t, &f.tensor));
      req.feeds.push_back(std::move(f));
    }
    req.fetches = fetches;
    req.targets = targets;
    req.timeout_in_ms = options.timeout_in_ms;
    req.output_partition_graphs = options.output_partition_graphs;
    ASSIGN_OR_RETURN(rpc::RunStepResponse resp, stub_.RunStep(req));
    if (metadata != nullptr) {
      metadata->partition_graphs.clear();
      for (const std::string& bytes : resp.partition_graphs) {
        GraphDef g;
        if (!g.ParseFromString(bytes)) {
          return absl::DataLossError("the master sent a partition graph that does not parse");
        }
        metadata->partition_graphs.push_back(std::move(g));
      }
    }
    std::vector<Tensor> out;
    for (const rpc::TensorWire& w : resp.fetches) {
      ASSIGN_OR_RETURN(Tensor t, TensorFromWire(w));
      out.push_back(std::move(t));
    }
    return out;
  }

  std::vector<std::string> ListDevices() const override { return devices_; }
  std::vector<AllocatorStats> DeviceMemoryStats() const override { return stats_; }

  absl::Status Close() override {
    if (handle_.empty()) return absl::OkStatus();
    absl::Status s = stub_.CloseSession(handle_);
    handle_.clear();
    return s;
  }

 private:
  MasterStub stub_;
  std::string handle_;
  std::vector<std::string> devices_;
  std::vector<AllocatorStats> stats_;
};

}  // namespace

absl::StatusOr<std::string> ParseThriftTarget(const std::string& target) {
  constexpr absl::string_view kScheme = "thrift://";
  if (!absl::StartsWith(target, kScheme) || target.size() == kScheme.size() ||
      target.find(':', kScheme.size()) == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("session target '", target, "' is not thrift://host:port"));
  }
  return target.substr(kScheme.size());
}

namespace {

// options.rpc with its TLS context: the one given, or the "client"
// credentials of options.security (or the environment's).
absl::StatusOr<RpcOptions> ClientRpc(const ClusterSessionOptions& options,
                                     const std::vector<std::string>& hosts) {
  RpcOptions rpc = options.rpc;
  if (rpc.tls != nullptr) return rpc;
  const TransportSecurity security =
      options.security.unset() ? TransportSecurityFromEnv() : options.security;
  ASSIGN_OR_RETURN(rpc.tls, ResolveTransportSecurity(security, kClientIdentity, hosts));
  return rpc;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NewRemoteSession(const std::string& target,
                                                          const GraphDef& def,
                                                          const ClusterSessionOptions& options) {
  ASSIGN_OR_RETURN(std::string address, ParseThriftTarget(target));
  absl::StatusOr<HostPort> hp = ParseHostPort(address);
  ASSIGN_OR_RETURN(RpcOptions rpc, ClientRpc(options, {hp.ok() ? hp->host : address}));
  auto session = std::make_unique<RemoteSession>(address, rpc);
  RETURN_IF_ERROR(session->Create(def, options));
  return std::unique_ptr<Session>(std::move(session));
}

absl::StatusOr<std::unique_ptr<Session>> NewClusterSession(const ClusterSpec& cluster,
                                                           const GraphDef& def,
                                                           const ClusterSessionOptions& options) {
  ASSIGN_OR_RETURN(RpcOptions rpc, ClientRpc(options, ClusterHosts(cluster)));
  auto cache = std::make_unique<ClusterWorkerCache>(cluster, "", rpc);
  MasterSessionOptions master;
  master.workers = cache.get();
  master.session = WithBuiltinRegistries(options.session);
  master.wait_for_cluster_ms = options.wait_for_cluster_ms;
  ASSIGN_OR_RETURN(std::unique_ptr<MasterSession> session,
                   MasterSession::Create(master, def, std::move(cache)));
  return std::unique_ptr<Session>(std::move(session));
}

}  // namespace sluice
