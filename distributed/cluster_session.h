// Sessions over a cluster, by where the master runs:
//  - NewRemoteSession("thrift://host:port", ...): the master of a running
//    server (tools/server) places and runs the graph; this process only
//    sends feeds and receives fetches.
//  - NewClusterSession(spec, ...): a master in this process, talking to every
//    task of `spec` over Thrift.
//  - Server::NewSession (distributed/server.h): a master in a process that
//    also hosts one of the tasks (the usual between-graph worker).
//
//   ClusterSessionOptions opts;  opts.session.default_device = "/job:worker/task:0";
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
#include "session/session_config.h"

namespace sluice {

struct ClusterSessionOptions {
  // The session's knobs (session/session_config.h), the same struct a local
  // session takes. Its placement and execution groups reach the master
  // whichever way it runs (over the wire for NewRemoteSession); registries
  // left null are the built-ins (in-process masters) or the server's
  // (remote); the devices group is unused (each task made its own).
  // default_device "": the first device of the cluster (NewClusterSession,
  // NewRemoteSession) or the server's own task (Server::NewSession).
  SessionConfig session;
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
