// Sessions over a cluster, by where the master runs:
//  - NewRemoteSession("thrift://host:port", ...): the master of a running
//    server (tools/server) places and runs the graph; this process only
//    sends feeds and receives fetches.
//  - NewClusterSession(spec, ...): a master in this process, talking to every
//    task of `spec` over Thrift.
//  - Server::NewSession (distributed/server.h): a master in a process that
//    also hosts one of the tasks (the usual between-graph worker).
//
//   ClusterSessionOptions opts;  opts.default_device = "/job:worker/task:0";
//   ASSIGN_OR_RETURN(std::unique_ptr<Session> s,
//                    NewRemoteSession("thrift://127.0.0.1:4000", graph_def, opts));
//   ASSIGN_OR_RETURN(auto out, s->Run({{"x", x}}, {"loss"}, {"train"}));
//
// Errors: InvalidArgument for a malformed target; Unavailable naming the
// task when it cannot be reached within the deadlines. Thread-safe.
#ifndef SLUICE_DISTRIBUTED_CLUSTER_SESSION_H_
#define SLUICE_DISTRIBUTED_CLUSTER_SESSION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/rpc/worker_stub.h"
#include "distributed/transport_security.h"
#include "graph/graph.h"
#include "runtime/session.h"

namespace sluice {

struct ClusterSessionOptions {
  // Where nodes that ask for no device go (a partial name, e.g.
  // "/job:worker/task:0"); "" for the first device of the cluster.
  std::string default_device;
  bool allow_soft_placement = true;
  int64_t step_timeout_ms = 60000;     // a step that takes longer fails
  int64_t wait_for_cluster_ms = 30000;  // for every task to answer at creation
  RpcOptions rpc;
  // When rpc.tls is null: this process connects as the job's "client"
  // identity from security.tls_dir, or in plaintext when insecure (loopback
  // targets only). Unset: from the environment (transport_security.h).
  TransportSecurity security;
};

absl::StatusOr<std::unique_ptr<Session>> NewRemoteSession(const std::string& target,
                                                          const GraphDef& def,
                                                          const ClusterSessionOptions& options = {});

absl::StatusOr<std::unique_ptr<Session>> NewClusterSession(const ClusterSpec& cluster,
                                                           const GraphDef& def,
                                                           const ClusterSessionOptions& options = {});

// "host:port" of "thrift://host:port"; InvalidArgument otherwise.
absl::StatusOr<std::string> ParseThriftTarget(const std::string& target);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_CLUSTER_SESSION_H_
