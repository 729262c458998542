#include "distributed/server.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "distributed/service_handlers.h"
#include "base/status_macros.h"
#include "builtin_session.h"
#include "ops/io/file_write_policy.h"

namespace sluice {
namespace {

// Where the examples keep their checkpoints and logs by default.
constexpr char kDefaultFileWriteRoot[] = "/tmp/sluice";

// Splits "host:port" / "[v6]:port".
absl::Status SplitAddress(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), port)) {
    return absl::InvalidArgumentError(absl::StrCat("'", address, "' is not host:port"));
  }
  *host = address.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  return absl::OkStatus();
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

namespace {

// $SLUICE_VARIABLE_MEMORY_BUDGET_MB (tools:launch --ps_memory_budget_mb sets
// it for the ps tasks) in bytes; 0 when unset or empty.
absl::StatusOr<int64_t> VariableBudgetFromEnv() {
  const char* mb = std::getenv(kVariableBudgetEnv);
  if (mb == nullptr || *mb == '\0') return 0;
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(mb, &parsed) || parsed < 0 || parsed > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrCat("bad $", kVariableBudgetEnv, " '", mb,
                                                   "': want MiB in 0..2^30"));
  }
  return parsed << 20;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Create(const ServerOptions& options) {
  const TaskConfig& config = options.config;
  RETURN_IF_ERROR(config.cluster.ValidateTask(config.job, config.task));
  std::unique_ptr<Server> server(new Server());
  server->task_ = TaskName(config.job, config.task);
  ASSIGN_OR_RETURN(server->address_, config.cluster.Address(config.job, config.task));
  std::string host;
  int port = 0;
  RETURN_IF_ERROR(SplitAddress(server->address_, &host, &port));

  // Graphs a remote client sends may write (and read checkpoints) only
  // under the job's directories: those named, else /tmp/sluice (this
  // user's: created 0700, or /tmp/sluice-<uid> when another user has it).
  std::vector<std::string> roots = options.file_write_roots;
  if (roots.empty()) roots.push_back(PrivateRoot(kDefaultFileWriteRoot));
  RETURN_IF_ERROR(RestrictGraphFileWrites(roots));
  RETURN_IF_ERROR(AllowGraphFileReads(options.file_read_roots));

  // The task listens on `host`, and its peers' hosts are where this task's
  // own connections go: an insecure run must stay on loopback for both.
  const TransportSecurity security =
      options.security.unset() ? TransportSecurityFromEnv() : options.security;
  std::vector<std::string> hosts = ClusterHosts(config.cluster);
  hosts.push_back(host);
  ASSIGN_OR_RETURN(std::shared_ptr<const TlsContext> tls,
                   ResolveTransportSecurity(security, server->task_, hosts));
  RpcOptions rpc = options.rpc;
  rpc.tls = tls;

  SessionConfig session = WithBuiltinRegistries(options.session);
  if (session.default_device.empty()) session.default_device = server->task_;
  server->cache_ = std::make_unique<ClusterWorkerCache>(config.cluster, server->task_, rpc);
  WorkerOptions worker_options;
  worker_options.task = server->task_;
  worker_options.session = session;
  worker_options.peers = server->cache_.get();
  worker_options.collective_transport = options.collective_transport;
  worker_options.variable_memory_budget_bytes = options.variable_memory_budget_bytes;
  if (worker_options.variable_memory_budget_bytes <= 0) {
    ASSIGN_OR_RETURN(worker_options.variable_memory_budget_bytes, VariableBudgetFromEnv());
  }
  ASSIGN_OR_RETURN(server->worker_, Worker::Create(worker_options));
  server->cache_->SetLocalWorker(server->worker_.get());

  server->master_options_.workers = server->cache_.get();
  server->master_options_.session = session;

  ThriftServerOptions thrift_options;
  // A host name is bound on every interface, except in a plaintext run:
  // that one is on loopback ("localhost" passes ResolveTransportSecurity's
  // check) and must listen there only, never on 0.0.0.0.
  thrift_options.host = IsIpLiteral(host) ? host : (tls == nullptr ? "127.0.0.1" : "0.0.0.0");
  thrift_options.port = port;
  thrift_options.task_name = server->task_;
  thrift_options.tensor_sink = server->worker_.get();  // CollectivePush without a copy
  thrift_options.tls = tls;
  auto worker_handler = std::make_shared<WorkerServiceHandler>(server->worker_.get());
  auto master_handler = std::make_shared<MasterServiceHandler>(server->master_options_);
  absl::StatusOr<std::unique_ptr<ThriftServer>> thrift =
      ThriftServer::Start(thrift_options, worker_handler, server->worker_.get(), master_handler);
  if (!thrift.ok()) {
    return AddContext(thrift.status(), absl::StrCat("starting ", server->task_));
  }
  server->thrift_ = *std::move(thrift);
  return server;
}

Server::~Server() { Stop(); }

std::string Server::target() const {
  std::string host;
  int port = 0;
  (void)SplitAddress(address_, &host, &port);
  if (host.find(':') != std::string::npos) host = absl::StrCat("[", host, "]");
  return absl::StrCat("thrift://", host, ":", thrift_->port());
}

absl::StatusOr<std::unique_ptr<Session>> Server::NewSession(const GraphDef& def,
                                                            ClusterSessionOptions options) {
  MasterSessionOptions master = master_options_;
  master.session = options.session;
  if (master.session.ops == nullptr) master.session.ops = master_options_.session.ops;
  if (master.session.kernels == nullptr) master.session.kernels = master_options_.session.kernels;
  if (master.session.default_device.empty()) {
    master.session.default_device = master_options_.session.default_device;
  }
  master.wait_for_cluster_ms = options.wait_for_cluster_ms;
  ASSIGN_OR_RETURN(std::unique_ptr<MasterSession> session, MasterSession::Create(master, def));
  return std::unique_ptr<Session>(std::move(session));
}

void Server::Join() { stopped_.WaitForNotification(); }

void Server::Stop() {
  {
    absl::MutexLock lock(&stop_mu_);
    if (stopped_flag_) return;
    stopped_flag_ = true;
  }
  if (thrift_ != nullptr) thrift_->Stop();
  stopped_.Notify();
}

namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a peer that went away is an error, not a signal
}

int ServeUntilTerminated(Server* server) {
  sigset_t set = TerminationSignals();
  int sig = 0;
  sigwait(&set, &sig);
  server->Stop();
  return sig;
}

}  // namespace sluice
