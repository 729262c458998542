// Server: one cluster task in a process: its devices and Worker, the
// cluster's WorkerCache, and a Thrift server on the task's port exposing
// WorkerService and MasterService.
//
//   ServerOptions opts;
//   ASSIGN_OR_RETURN(opts.config, TaskConfigFromEnv());   // or TaskConfigFromFlags
//   ASSIGN_OR_RETURN(std::unique_ptr<Server> server, Server::Create(opts));
//   if (opts.config.job == "ps") server->Join();          // serve until Stop
//   ASSIGN_OR_RETURN(auto session, server->NewSession(graph_def, {}));
//
// Create binds the task's port before returning (Unavailable naming the
// address when it is taken). Every connection is mutual TLS unless
// options.security says insecure (see transport_security.h). The task's address host decides where it
// listens: an IP literal listens there, a DNS name (as in Kubernetes)
// listens on all interfaces.
//
// Thread-safe. Stop may be called from any thread (e.g. a signal watcher);
// the destructor stops.
#ifndef SLUICE_DISTRIBUTED_SERVER_H_
#define SLUICE_DISTRIBUTED_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "distributed/cluster/cluster_spec.h"
#include "distributed/cluster_session.h"
#include "distributed/cluster_worker_cache.h"
#include "distributed/master_session.h"
#include "distributed/rpc/thrift_server.h"
#include "distributed/transport_security.h"
#include "distributed/worker.h"
#include "session/session_config.h"

namespace sluice {

inline constexpr char kVariableBudgetEnv[] = "SLUICE_VARIABLE_MEMORY_BUDGET_MB";

struct ServerOptions {
  TaskConfig config;
  // The task's registries (null: the built-ins, ops/builtins.h), its
  // devices (devices.name_prefix is set from the task) and how its worker
  // runs partitions (inter_op_parallelism). Placement is each session's
  // own: Server::NewSession's options, or what a remote client's
  // CreateSession carries.
  SessionConfig session;
  RpcOptions rpc;
  // Collectives with members on other tasks (WorkerOptions::collective_transport).
  RpcCollectiveTransport::Options collective_transport;
  // Where graphs run in this process may write files (SaveV2) and read
  // checkpoints (RestoreV2): the job's checkpoint and log directories; none
  // named: /tmp/sluice, created 0700 (or /tmp/sluice-<uid> when another user
  // owns /tmp/sluice). Each must be this user's and writable by no one
  // else. The restriction is process-wide (ops/io/file_write_policy.h).
  std::vector<std::string> file_write_roots;
  // Where graphs may read checkpoints besides the write roots (a model to
  // fine-tune from); they must exist.
  std::vector<std::string> file_read_roots;
  // WorkerOptions::variable_memory_budget_bytes (tools:server
  // --variable_memory_budget_mb); <= 0: $SLUICE_VARIABLE_MEMORY_BUDGET_MB
  // (MiB; tools:launch --ps_memory_budget_mb sets it), else none.
  int64_t variable_memory_budget_bytes = 0;
  // Mutual TLS with the job's credentials (the task's own certificate, and
  // the cluster's peers must show theirs), or an explicit insecure
  // loopback run. Unset: from the environment (SLUICE_TLS_DIR,
  // SLUICE_INSECURE), as tools:launch sets it; neither set is an error.
  // Sets rpc.tls for this task's own connections.
  TransportSecurity security;
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Create(const ServerOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  const std::string& task() const { return task_; }  // "/job:J/replica:0/task:T"
  int port() const { return thrift_->port(); }
  std::string target() const;  // "thrift://host:port", for NewRemoteSession
  Worker* worker() { return worker_.get(); }
  WorkerCache* worker_cache() { return cache_.get(); }

  // A session whose master runs here, with this task's worker in process.
  // Nodes that ask for no device go to this task unless
  // options.session.default_device says otherwise. options.session's
  // registries, when null, are the server's.
  absl::StatusOr<std::unique_ptr<Session>> NewSession(const GraphDef& def,
                                                      ClusterSessionOptions options = {});

  void Join();  // until Stop
  void Stop();

 private:
  Server() = default;

  std::string task_;
  std::string address_;
  MasterSessionOptions master_options_;  // registries resolved, default_device set
  std::unique_ptr<Worker> worker_;
  std::unique_ptr<ClusterWorkerCache> cache_;
  std::unique_ptr<ThriftServer> thrift_;
  absl::Mutex stop_mu_;
  bool stopped_flag_ ABSL_GUARDED_BY(stop_mu_) = false;
  absl::Notification stopped_;
};

// For a process that only serves its task (a parameter server, a task that
// holds layers of a model-parallel graph): call BlockTerminationSignals
// first thing in main (before any thread starts, so that every thread
// inherits the mask), then ServeUntilTerminated after Create. It returns
// once SIGTERM or SIGINT arrives and the server has stopped; the signal.
void BlockTerminationSignals();
int ServeUntilTerminated(Server* server);

}  // namespace sluice

#endif  // SLUICE_DISTRIBUTED_SERVER_H_
